// Steer from the composer while a proposal waits, in a real VS Code against the real daemon:
// the run pauses at its boundary and goes on at once with the person's message, and no
// notification says it is paused while the panel shows it going on.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  failureScreenshot,
  makeWorkspace,
  openFolder,
  runCommand,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

const STEERING = "keep the change to one line";

let browser: Browser;

describe("steer", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("Steer goes on with the message and no notification says the run is paused", async () => {
    const step = stepTimer("steer-toast");
    const responses = writeResponses(
      "steer-toast.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "edit_file", path: "app.py", old: "value * 1", new: "value * 2" },
      { final: "doubled" },
      { final: "doubled" },
    );
    const workspace = makeWorkspace("steer-toast", {
      "counterfoil.model": `scripted:${responses}`,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "double the value");
      const panel = runPanel(page);
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      await panel.locator("#steer").click();
      const input = page.locator(".quick-input-widget input");
      await input.waitFor();
      await input.fill(STEERING);
      await page.keyboard.press("Enter");
      await panel
        .locator(".person", { hasText: STEERING })
        .waitFor({ timeout: 60_000 });
      // Asked again in the resumed run: the pause and its report are behind us.
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      step("steered");
      // The notification center keeps every notification shown, a hidden toast too.
      await runCommand(page, "Notifications: Show Notifications");
      const center = page.locator(".notifications-center");
      await center.waitFor();
      await screenshot(page, "steer-notifications.png");
      assert.doesNotMatch(await center.innerText(), /paused/i);
    } catch (error) {
      await failureScreenshot(page, "failure-steer-toast.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

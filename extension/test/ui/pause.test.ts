// Pause and steer, in a real VS Code against the real daemon: Pause while an approved command
// runs lets the command finish and leave its receipt, then the run stops at that boundary and
// the panel offers it as paused; Steer and resume goes on with one message from the person,
// which the run's checkpoint keeps, and nothing is replayed.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  answerCommandModal,
  editorTitleAction,
  makeWorkspace,
  openFolder,
  receiptsOnDisk,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

const WAIT = ["python", "-c", "import time; time.sleep(4)"];
const STEERING = "keep the change to one line";

let browser: Browser;

/** Every file the run's session folder holds, as text. */
function sessionText(workspace: string): string {
  const sessions = join(workspace, ".counterfoil/sessions");
  return readdirSync(sessions, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), "latin1"))
    .join("\n");
}

describe("pause and steer", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("Pause during a command lets it finish and be receipted; Steer and resume goes on with the person's message", async () => {
    const step = stepTimer("pause");
    const responses = writeResponses(
      "pause.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "run_command", argv: WAIT },
      { tool: "edit_file", path: "app.py", old: "value * 1", new: "value * 2" },
      { final: "doubled" },
    );
    const workspace = makeWorkspace("pause-and-steer", {
      "counterfoil.model": `scripted:${responses}`,
      "counterfoil.allowedCommands": [WAIT],
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "wait, then double");
      const panel = runPanel(page);
      await answerCommandModal(page, "Accept");
      await panel
        .locator(".step.streaming h3", {
          hasText: "running the approved command…",
        })
        .waitFor({ timeout: 30_000 });
      await panel.locator("#pause").click();
      await panel
        .locator(".run-state", { hasText: "Pausing at the next boundary…" })
        .waitFor({ timeout: 10_000 });
      step("pausing");
      const offer = panel.locator(".resumable");
      await offer.waitFor({ timeout: 60_000 });
      step("paused");
      assert.match(await offer.innerText(), /Paused run: wait, then double/);
      await waitForNotification(page, /Counterfoil run paused, as asked/);
      assert.deepEqual(
        receiptsOnDisk(workspace).map((receipt) => [
          receipt.tool,
          receipt.exit_state,
        ]),
        [["run_command", "ok"]],
        "the command ran to its end and left its receipt before the pause",
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-paused.png");

      await offer.locator(".reason-input").fill(STEERING);
      await offer.locator("button", { hasText: /^Steer and resume$/ }).click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      step("resumed with steering");
      assert.ok(
        sessionText(workspace).includes(STEERING),
        "the steering message is in the run's checkpoint",
      );
      await editorTitleAction(page, "Accept").click();
      await panel
        .locator(".verdict", { hasText: "The model's claim: doubled" })
        .waitFor({ timeout: 60_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-steered-ended.png");
      assert.deepEqual(
        receiptsOnDisk(workspace).map((receipt) => [
          receipt.tool,
          receipt.tool_call_id,
        ]),
        [
          ["run_command", "call-1"],
          ["edit_file", "call-2"],
        ],
        "nothing replayed",
      );
    } catch (error) {
      await screenshot(page, "failure-pause.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

// Steer while a command's question is open, in a real VS Code against the real daemon: the
// pause withdraws the question and the resumed run asks it again. The daemon says the call's
// state once (`counterfoil/approvalState`), and the run panel, the receipts tree and the first
// question's notification all say that state: pending again, never withdrawn.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  failureScreenshot,
  makeWorkspace,
  openFolder,
  receiptsPane,
  runCommand,
  runPanel,
  screenshot,
  showCounterfoilView,
  startBrowser,
  startRun,
  stepTimer,
  validation,
  waitForDaemon,
  writeResponses,
} from "./workbench";

const STEERING = "only run the tests";

let browser: Browser;

describe("a question asked again after a steer", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("reads pending in the run panel, the receipts tree and the first question's notification", async () => {
    const step = stepTimer("steer-state");
    const responses = writeResponses(
      "steer-state.jsonl",
      { tool: "run_command", argv: validation },
      { final: "ran the tests" },
      { final: "ran the tests" },
    );
    const workspace = makeWorkspace("steer-state", {
      "counterfoil.model": `scripted:${responses}`,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "run the tests");
      const panel = runPanel(page);
      const first = page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /run a command \(call-1\): /,
        })
        .first();
      await first.waitFor({ timeout: 120_000 });
      step("asked");
      await panel.locator("#steer").click();
      const input = page.locator(".quick-input-widget input");
      await input.waitFor();
      await input.fill(STEERING);
      await page.keyboard.press("Enter");
      await panel
        .locator(".person", { hasText: STEERING })
        .waitFor({ timeout: 60_000 });
      // Asked again in the resumed run, with the daemon's note that the model has not read
      // the message yet.
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /call-1\) \(proposed before your message/,
        })
        .first()
        .waitFor({ timeout: 60_000 });
      step("asked again");

      // The panel: call-1 is one proposal, pending.
      const proposal = panel.locator('.proposal[data-call="call-1"]');
      await panel
        .locator('.proposal.state-pending[data-call="call-1"]')
        .waitFor({ timeout: 60_000 });
      assert.equal(await proposal.count(), 1);
      assert.match(await proposal.locator(".badge").innerText(), /^pending/);

      // The tree: call-1 pending, not withdrawn.
      await showCounterfoilView(page);
      const receipts = receiptsPane(page);
      const row = receipts
        .locator(".monaco-list-row", { hasText: /call-1 / })
        .first();
      await receipts
        .locator(".monaco-list-row", { hasText: /call-1 pending/ })
        .first()
        .waitFor({ timeout: 60_000 });
      assert.doesNotMatch(await row.innerText(), /withdrawn/);
      step("panel and tree");

      // The first question's notification: its Accept does nothing and says the call is
      // pending again (the notification center keeps it, shown or hidden).
      await runCommand(page, "Notifications: Show Notifications");
      const center = page.locator(".notifications-center");
      await center.waitFor();
      await center
        .locator(".notification-list-item", {
          hasText: /run a command \(call-1\): /,
        })
        .first()
        .locator(".monaco-button", { hasText: /^Accept$/ })
        .click();
      const said = center
        .locator(".notification-list-item", { hasText: /Accept did nothing/ })
        .first();
      await said.waitFor({ timeout: 30_000 });
      assert.match(
        await said.innerText(),
        /\(call-1\) was withdrawn and is pending again: answer its new question/,
      );
      await screenshot(page, "steer-state.png");
      // Nothing was answered by that button: the question is still pending in the panel.
      assert.match(await proposal.locator(".badge").innerText(), /^pending/);
    } catch (error) {
      await failureScreenshot(page, "failure-steer-state.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

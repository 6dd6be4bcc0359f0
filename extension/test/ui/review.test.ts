// The review a careful person trusts, in a real VS Code against the real daemon: work is never
// lost (a dirty target at Accept writes nothing and the proposal stays answerable), a file saved
// outside the editor makes its proposal stale (No sent, Accept disabled, said), and the run panel
// shows each step, each proposal's state and the verdict, with the model's answer as its claim.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  answerCommandQuestion,
  clearNotifications,
  editorTitleAction,
  makeWorkspace,
  openFile,
  receiptsOnDisk,
  runCommand,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
  runPanel,
  openFolder,
} from "./workbench";

let browser: Browser;

describe("the review a careful person trusts", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a dirty target at Accept writes nothing and stays answerable; after revert Accept writes and the editor shows it", async () => {
    const step = stepTimer("dirty");
    const workspace = makeWorkspace("dirty-at-accept");
    const original = readFileSync(join(workspace, "app.py"), "utf8");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await openFile(page, "app.py");
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      step("diff shown");
      // Type in app.py without saving, then Accept in the diff.
      await page
        .locator(".tabs-container .tab", { hasText: /^app\.py/ })
        .first()
        .click();
      await page.locator(".editor-group-container.active .view-lines").click();
      await page.keyboard.press("Control+End");
      await page.keyboard.type("\n# my unsaved note\n");
      await page
        .locator(".tabs-container .tab", { hasText: "edit_file app.py" })
        .click();
      await editorTitleAction(page, "Accept").click();
      await waitForNotification(
        page,
        /Nothing was written: app\.py has unsaved changes/,
      );
      await screenshot(page, "dirty-at-accept.png");
      assert.equal(
        readFileSync(join(workspace, "app.py"), "utf8"),
        original,
        "nothing is written while the buffer is dirty",
      );
      step("dirty Accept refused, proposal pending");
      // Revert the buffer: the proposal can be answered again, and Accept now writes.
      await page
        .locator(".tabs-container .tab", { hasText: /^app\.py/ })
        .first()
        .click();
      await runCommand(page, "File: Revert File");
      // The revert reads the file again before the buffer is clean: Accept only then.
      await page
        .locator(".tabs-container .tab.dirty", { hasText: /^app\.py/ })
        .waitFor({ state: "detached", timeout: 10_000 });
      await page
        .locator(".tabs-container .tab", { hasText: "edit_file app.py" })
        .click();
      await editorTitleAction(page, "Accept").click();
      await answerCommandQuestion(page, "Reject");
      await waitForNotification(page, /Counterfoil finished \(changed app\.py/);
      assert.equal(
        readFileSync(join(workspace, "app.py"), "utf8"),
        original.replace("value * 1", "value * 2"),
      );
      await page
        .locator(".editor-group-container.active .view-lines", {
          hasText: "value * 2",
        })
        .waitFor();
      await screenshot(page, "dirty-then-accepted.png");
      step("accepted after revert; the open document shows the new bytes");
    } finally {
      await page.close();
    }
  });

  test("a file saved outside the editor leaves its proposal pending but no longer applying: Accept disabled, said, Reject tells why; the panel's verdict after everything was rejected", async () => {
    const step = stepTimer("stale");
    const workspace = makeWorkspace("stale-proposal");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      step("diff shown");
      const panel = runPanel(page);
      await panel
        .locator(".proposal.state-pending", { hasText: "edit_file app.py" })
        .waitFor({ timeout: 30_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "panel-with-pending-proposal.png");
      const saved =
        "def double(value: int) -> int:\n    return value + value\n";
      writeFileSync(join(workspace, "app.py"), saved);
      const said = await waitForNotification(
        page,
        /still pending but no longer applies/,
      );
      // The model's `old` text is gone, so only Reject is offered.
      assert.match(said, /cannot be proposed again/);
      step("no longer applies said");
      await panel
        .locator(".proposal.state-pending", { hasText: "no longer applies" })
        .waitFor({ timeout: 30_000 });
      // Accept is disabled on a proposal that no longer applies. The title bar redraws a
      // moment after the context key that says so changes: wait for it.
      await editorTitleAction(page, "Accept")
        .and(page.locator(".disabled"))
        .waitFor({ timeout: 10_000 });
      await screenshot(page, "stale-proposal.png");
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: "no longer applies",
        })
        .locator(".monaco-button", { hasText: /^Reject$/ })
        .click();
      await panel
        .locator(".proposal.state-rejected", {
          hasText: "the file changed while the proposal waited",
        })
        .waitFor({ timeout: 30_000 });
      await answerCommandQuestion(page, "Reject");
      await panel.locator(".verdict").waitFor({ timeout: 30_000 });
      const verdict = await panel.locator(".verdict").innerText();
      assert.match(verdict, /No files changed/);
      assert.match(verdict, /2 effects rejected/);
      assert.match(verdict, /The model's claim: changed and validated app\.py/);
      assert.match(verdict, /Validation/);
      await page.mouse.move(10, 10);
      await screenshot(page, "panel-verdict-all-rejected.png");
      assert.equal(readFileSync(join(workspace, "app.py"), "utf8"), saved);
      assert.deepEqual(
        receiptsOnDisk(workspace).filter(
          (receipt) => receipt.exit_state === "ok",
        ),
        [],
      );
      step("verdict shown");
      await clearNotifications(page);
    } finally {
      await page.close();
    }
  });
});

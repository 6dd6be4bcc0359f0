// Autosave on (code-server's afterDelay), in a real VS Code against the real daemon: typing in
// a file whose proposal is pending saves it, and the proposal stays pending, says it no longer
// applies and offers to re-propose; the file being typed in keeps the focus; Re-propose shows
// the model's edit on the new bytes, and Accept writes both.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  answerCommandQuestion,
  editorTitleAction,
  failureScreenshot,
  makeWorkspace,
  openFolder,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
} from "./workbench";

let browser: Browser;

describe("autosave while a proposal is pending", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("typing saves the file; the proposal stays pending, no focus is taken, Re-propose applies the edit to the new bytes", async () => {
    const step = stepTimer("autosave");
    const workspace = makeWorkspace("autosave", {
      "files.autoSave": "afterDelay",
      "files.autoSaveDelay": 300,
    });
    const original = readFileSync(join(workspace, "app.py"), "utf8");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      step("diff shown");
      // The person opens app.py and types; autosave writes it within a second.
      // "app.py:1" matches the file only, not the open diff named after it.
      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget input").fill("app.py:1");
      await page
        .locator(".quick-input-list .monaco-list-row.focused", {
          hasText: "app.py",
        })
        .waitFor();
      await page.keyboard.press("Enter");
      await page
        .locator(".tabs-container .tab.active", { hasText: /^app\.py/ })
        .waitFor();
      await page.locator(".editor-group-container.active .view-lines").click();
      await page.keyboard.press("Control+Home");
      await page.keyboard.type("# my note\n");
      const said = await waitForNotification(
        page,
        /still pending but no longer applies/,
      );
      assert.match(said, /Re-propose/);
      step("no longer applies said");
      await page.keyboard.type("# still typing\n");
      // Autosave writes after its delay: look until the typing is on disk.
      const typed = /^# my note\n# still typing\n/;
      const deadline = Date.now() + 10_000;
      while (
        !typed.test(readFileSync(join(workspace, "app.py"), "utf8")) &&
        Date.now() < deadline
      ) {
        await page.waitForTimeout(100);
      }
      assert.match(
        readFileSync(join(workspace, "app.py"), "utf8"),
        typed,
        "the typing landed in app.py and was saved",
      );
      await runPanel(page)
        .locator(".proposal.state-pending", { hasText: "no longer applies" })
        .waitFor({ timeout: 30_000 });
      await screenshot(page, "autosave-no-longer-applies.png");
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: "no longer applies",
        })
        .locator(".monaco-button", { hasText: /^Re-propose$/ })
        .click();
      step("re-propose clicked");
      // The fresh diff: the model's edit on the person's bytes. The old diff's tab, titled the
      // same, may still be closing, and the fresh one opens beside the file being typed in: it
      // is found by its text, and its own tab brings it forward.
      const fresh = page.locator(".editor-group-container", {
        has: page.locator(".monaco-diff-editor .modified .view-lines", {
          hasText: "my note",
        }),
      });
      await fresh.waitFor({ timeout: 30_000 });
      await fresh
        .locator(".tab.active", { hasText: /edit_file app\.py \(call-\d+\)/ })
        .click();
      await waitForProposalDiff(page);
      await page
        .locator(".editor-group-container.active .modified .view-lines", {
          hasText: "my note",
        })
        .waitFor();
      await screenshot(page, "autosave-reproposed.png");
      await editorTitleAction(page, "Accept").click();
      await answerCommandQuestion(page, "Reject");
      await waitForNotification(page, /Counterfoil finished/);
      const written = readFileSync(join(workspace, "app.py"), "utf8");
      assert.equal(
        written,
        `# my note\n# still typing\n${original.replace("value * 1", "value * 2")}`,
      );
      step("accepted on the new bytes");
    } catch (error) {
      await failureScreenshot(page, "failure-autosave.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

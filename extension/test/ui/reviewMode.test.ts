// Review mode in a real VS Code against the real daemon: an approved command runs on a copy of
// the root, its changes come back as one multi-file diff with how it ran, and only Accept applies
// them; the receipt says the command ran in review mode, under which mechanism, and what was
// accepted. Then Revert on that command's receipt: the same multi-file diff, a file changed
// since is named and left alone, Accept puts the others back.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  answerCommandModal,
  clearNotifications,
  makeWorkspace,
  openFolder,
  receiptsOnDisk,
  screenshot,
  showCounterfoilView,
  startBrowser,
  startRun,
  waitForDaemon,
  waitForNotification,
  writeResponses,
} from "./workbench";

const TOOL = [
  "import os, pathlib",
  "os.makedirs('gen', exist_ok=True)",
  "pathlib.Path('gen/out.txt').write_text('out\\n')",
  "pathlib.Path('data.txt').write_text('after\\n')",
  "os.remove('old.txt')",
  "",
].join("\n");
const TOOL_ARGV = ["python", "tool.py"];

let browser: Browser;

describe("review mode", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a reviewed command's changes are one multi-file diff, Accept applies them, the receipt says how it ran", async () => {
    const script = writeResponses(
      "review-mode.jsonl",
      { tool: "run_command", argv: TOOL_ARGV },
      { final: "ran the tool" },
    );
    const workspace = makeWorkspace("review-mode", {
      "counterfoil.model": `scripted:${script}`,
      "counterfoil.allowedCommands": [TOOL_ARGV],
      "counterfoil.commandSandbox": "review",
    });
    writeFileSync(join(workspace, "tool.py"), TOOL);
    writeFileSync(join(workspace, "data.txt"), "before\n");
    writeFileSync(join(workspace, "old.txt"), "old\n");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "run the tool");
      await answerCommandModal(page, "Accept");
      const question = await waitForNotification(
        page,
        /Apply the changes of python tool\.py/,
      );
      assert.match(question, /exit status 0/);
      assert.match(question, /in a copy of the root \(bubblewrap\)/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "Review python tool.py",
        })
        .waitFor({ timeout: 30_000 });
      // Nothing reaches the root before Accept.
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "before\n",
      );
      assert.ok(existsSync(join(workspace, "old.txt")));
      await page.mouse.move(10, 10);
      await screenshot(page, "review-mode-changes.png");
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /Apply the changes of python tool\.py/,
        })
        .locator(".monaco-button", { hasText: /^Accept$/ })
        .click();
      await waitForNotification(page, /Counterfoil finished/);
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "after\n",
      );
      assert.equal(
        readFileSync(join(workspace, "gen/out.txt"), "utf8"),
        "out\n",
      );
      assert.ok(!existsSync(join(workspace, "old.txt")));
      const command = receiptsOnDisk(workspace).find(
        (receipt) => receipt.tool === "run_command",
      )!;
      assert.deepEqual(command.sandbox, {
        mode: "review",
        mechanism: "bubblewrap",
        network: false,
      });
      const review = command.review as Record<string, unknown>;
      assert.equal(review.decision, "accepted");
      assert.deepEqual([...(review.applied as string[])].sort(), [
        "data.txt",
        "gen/out.txt",
        "old.txt",
      ]);
      await screenshot(page, "review-mode-accepted.png");

      // Revert the command from its receipt; gen/out.txt, edited since, is left alone.
      writeFileSync(join(workspace, "gen/out.txt"), "edited by hand\n");
      await clearNotifications(page);
      await showCounterfoilView(page);
      const row = page
        .locator(".pane", {
          has: page.locator(".pane-header", { hasText: "Receipts" }),
        })
        .locator(".monaco-list-row", { hasText: "run_command python" })
        .first();
      await row.waitFor({ timeout: 30_000 });
      await row.hover();
      await row.locator('.action-label[aria-label^="Revert"]').click();
      const asked = await waitForNotification(page, /Revert call-1/);
      assert.match(asked, /gen\/out\.txt \(changed since the command\)/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "Revert call-1",
        })
        .waitFor({ timeout: 30_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "command-revert-diff.png");
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /Revert call-1/,
        })
        .locator(".monaco-button", { hasText: /^Accept$/ })
        .click();
      await waitForNotification(page, /reverted call-1 in 2 files/);
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "before\n",
      );
      assert.equal(readFileSync(join(workspace, "old.txt"), "utf8"), "old\n");
      assert.equal(
        readFileSync(join(workspace, "gen/out.txt"), "utf8"),
        "edited by hand\n",
      );
      const revert = receiptsOnDisk(workspace).at(-1)!;
      assert.equal(revert.reverts, "call-1");
      await screenshot(page, "command-reverted.png");
    } finally {
      await page.close();
    }
  });
});

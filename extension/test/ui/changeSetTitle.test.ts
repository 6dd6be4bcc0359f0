// A reviewed command's multi-file diff in a real VS Code against the real daemon: Accept is in
// the diff's own title bar and applies the changes; the notification's Accept, pressed after
// that answer, does nothing and says the changes were already accepted.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  answerCommandQuestion,
  editorTitleAction,
  makeWorkspace,
  openFolder,
  screenshot,
  startBrowser,
  startRun,
  waitForDaemon,
  waitForNotification,
  writeResponses,
} from "./workbench";

const TOOL_ARGV = ["python", "tool.py"];

let browser: Browser;

describe("a change set's diff", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("has Accept in its title bar, and the notification's Accept after that says it did nothing", async () => {
    const script = writeResponses(
      "change-set-title.jsonl",
      { tool: "run_command", argv: TOOL_ARGV },
      { final: "ran the tool" },
    );
    const workspace = makeWorkspace("change-set-title", {
      "counterfoil.model": `scripted:${script}`,
      "counterfoil.allowedCommands": [TOOL_ARGV],
      "counterfoil.commandSandbox": "review",
    });
    writeFileSync(
      join(workspace, "tool.py"),
      "import pathlib\npathlib.Path('data.txt').write_text('after\\n')\n",
    );
    writeFileSync(join(workspace, "data.txt"), "before\n");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "run the tool");
      await answerCommandQuestion(page, "Accept");
      await waitForNotification(page, /Apply the changes of python tool\.py/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "Review python tool.py",
        })
        .waitFor({ timeout: 30_000 });
      const accept = editorTitleAction(page, "Accept");
      await accept.waitFor({ timeout: 30_000 });
      await editorTitleAction(page, "Reject").waitFor();
      await page.mouse.move(10, 10);
      await screenshot(page, "change-set-title-bar.png");

      await accept.click();
      await waitForNotification(page, /Counterfoil finished/);
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "after\n",
      );

      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /Apply the changes of python tool\.py/,
        })
        .locator(".monaco-button", { hasText: /^Accept$/ })
        .click();
      const late = await waitForNotification(page, /Accept did nothing/);
      assert.match(late, /\(call-1\) was already accepted/);
      await screenshot(page, "change-set-late-accept.png");
    } finally {
      await page.close();
    }
  });
});

// Verify on a log that was tampered with, in a real VS Code against the real daemon: the report
// never states a comforting fact it did not establish, and the tree's row names the finding.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  clearNotifications,
  fixApp,
  makeWorkspace,
  openFolder,
  python,
  receiptLog,
  runCommand,
  screenshot,
  showCounterfoilView,
  startBrowser,
  validation,
  waitForDaemon,
  waitForNotification,
} from "./workbench";

let browser: Browser;

/** The fix-app run from the terminal, every effect approved: two receipts on disk. */
function runFixAppInTerminal(workspace: string): void {
  const ran = spawnSync(
    python,
    [
      "-m",
      "counterfoil",
      "agent",
      "--root",
      workspace,
      "--model",
      `scripted:${fixApp}`,
      "--allow-writes",
      "--allow-command",
      validation.join(" "),
      "make tests/test_math.py pass",
    ],
    { encoding: "utf8", input: "y\n".repeat(10), timeout: 120_000 },
  );
  assert.equal(ran.status, 0, `${ran.stdout}${ran.stderr}`);
}

describe("verify on a tampered log", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("drift is named as drift; a broken chain says the files were not checked", async () => {
    const workspace = makeWorkspace("verify-tampered");
    runFixAppInTerminal(workspace);
    writeFileSync(join(workspace, "app.py"), "# changed by hand\n");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await runCommand(page, "Counterfoil: Verify Receipts");
      const drifted = await waitForNotification(
        page,
        /files no longer what the agent wrote/,
      );
      assert.match(drifted, /The receipt chain is intact/);
      assert.match(drifted, /app\.py changed after call-1/);
      await showCounterfoilView(page);
      await page
        .locator(".monaco-list-row", {
          hasText: "Files changed after their receipts",
        })
        .waitFor();
      await screenshot(page, "verify-drift.png");

      // One receipt line altered as well: the chain is broken, so drift is unknown.
      const log = join(workspace, receiptLog);
      writeFileSync(
        log,
        readFileSync(log, "utf8").replace(
          '"edited app.py"',
          '"edited app.py!"',
        ),
      );
      await clearNotifications(page);
      await runCommand(page, "Counterfoil: Verify Receipts");
      const broken = await waitForNotification(
        page,
        /The receipt chain is broken/,
      );
      assert.match(broken, /files were not checked/);
      assert.doesNotMatch(broken, /still has the bytes/);
      await page
        .locator(".monaco-list-row", { hasText: "Receipt chain broken" })
        .waitFor();
      assert.equal(
        await page
          .locator(".monaco-list-row", { hasText: "Receipt log problem" })
          .count(),
        0,
      );
      await screenshot(page, "verify-broken-chain.png");
    } finally {
      await page.close();
    }
  });
});

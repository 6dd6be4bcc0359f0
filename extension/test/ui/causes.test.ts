// The editor's cause of a No reaches the run's record, through the real extension and daemon:
// a diff closed unanswered is recorded `closed`, and a proposal whose file changed on disk and
// was then rejected from its notice is recorded `stale`, never a plain rejection.

import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  daemonSettings,
  demoWorkspace,
  failureScreenshot,
  openFolder,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  waitForDaemon,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

let browser: Browser;

/** Each decision of the only run of `workspace`, from its record: "call-1 closed". */
function decisions(workspace: string): string[] {
  const sessions = join(workspace, ".counterfoil/sessions");
  const [run] = readdirSync(sessions, { withFileTypes: true }).filter((entry) =>
    entry.isDirectory(),
  );
  return readFileSync(join(sessions, run.name, "decisions.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.kind === "decision")
    .map((entry) => `${String(entry.call_id)} ${String(entry.state)}`);
}

describe("the editor's cause reaches the record", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a diff closed unanswered is recorded closed, a stale proposal rejected from its notice is recorded stale", async () => {
    const script = writeResponses(
      "causes.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "edit_file", path: "app.py", old: "* 1", new: "* 2" },
      { tool: "edit_file", path: "app.py", old: "* 1", new: "* 3" },
      { final: "gave up" },
    );
    const workspace = demoWorkspace("causes", daemonSettings(script));
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "make double() double");
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      await page
        .locator(".tabs-container .tab.active .tab-actions .action-label")
        .click();

      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      const app = join(workspace, "app.py");
      writeFileSync(app, `${readFileSync(app, "utf8")}# changed by hand\n`);
      const notice = page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /no longer applies/,
        })
        .first();
      await notice.waitFor({ timeout: 30_000 });
      await notice
        .locator(".monaco-button", { hasText: /^Reject$/ })
        .first()
        .click();
      await runPanel(page)
        .locator(".verdict", { hasText: "gave up" })
        .waitFor({ timeout: 60_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "causes-recorded.png");

      assert.deepEqual(decisions(workspace), ["call-1 closed", "call-2 stale"]);
    } catch (error) {
      await failureScreenshot(page, "failure-causes.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

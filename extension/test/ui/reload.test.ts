// A reload keeps the run, in a real VS Code against the real daemon: the window is reloaded
// (the browser's reload and Developer: Reload Window) at several moments after a proposal's diff
// opens, and every time the run's record says the waiting call was interrupted (never rejected,
// never stopped), the run stays resumable, the panel offers Resume, and Resume asks again.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  daemonSettings,
  demoWorkspace,
  editorTitleAction,
  failureScreenshot,
  inPanel,
  openFolder,
  receiptsOnDisk,
  reload,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

let browser: Browser;

type Entry = Record<string, unknown>;

/** The run's own record (`decisions.jsonl`), one entry a line, for the only run of `workspace`. */
function runRecord(workspace: string): Entry[] {
  const sessions = join(workspace, ".counterfoil/sessions");
  const runs = readdirSync(sessions, { withFileTypes: true }).filter((entry) =>
    entry.isDirectory(),
  );
  assert.equal(runs.length, 1, "one run on disk");
  return readFileSync(join(sessions, runs[0].name, "decisions.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Entry);
}

// Each reload comes this many milliseconds after the diff opened.
const RELOADS: Array<{ how: "browser" | "command"; after: number }> = [
  { how: "browser", after: 0 },
  { how: "command", after: 0 },
  { how: "browser", after: 400 },
  { how: "command", after: 1_000 },
  { how: "browser", after: 2_500 },
];

describe("a reload keeps the run", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("reloaded while a proposal waits, the run is interrupted, never rejected or stopped, and Resume asks again", async () => {
    const step = stepTimer("reload");
    const script = writeResponses(
      "reload.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "edit_file", path: "app.py", old: "* 1", new: "* 2" },
      { final: "doubled" },
    );
    const workspace = demoWorkspace("reload-keeps-run", daemonSettings(script));
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "make double() double");
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      step("proposal waiting");
      for (const [index, { how, after }] of RELOADS.entries()) {
        await page.waitForTimeout(after);
        await reload(page, how);
        await waitForDaemon(page);
        const offer = await inPanel(page, ".resumable");
        step(`reload ${index + 1} (${how}, ${after} ms): offered`);
        const record = runRecord(workspace);
        const moment = `reload ${index + 1} (${how}, ${after} ms)`;
        assert.deepEqual(
          record
            .filter((entry) => entry.kind === "decision")
            .map((entry) => `${String(entry.call_id)} ${String(entry.state)}`)
            .filter(
              (decision) =>
                !decision.endsWith(" interrupted") &&
                !decision.endsWith(" pending"), // asked again by a Resume
            ),
          [],
          `${moment}: the waiting call is interrupted, never rejected or stopped`,
        );
        assert.equal(
          record.some((entry) => entry.kind === "ended"),
          false,
          `${moment}: the run did not end; it stays resumable`,
        );
        const said = await offer.innerText();
        assert.match(said, /Nothing was rejected/);
        assert.match(
          said,
          /Waiting for your answer when it stopped: call-1 edit_file app\.py/,
        );
        if (index === 0 || index === RELOADS.length - 1) {
          await page.mouse.move(10, 10);
          await screenshot(page, `reload-offered-${index + 1}.png`);
        }
        await page.mouse.move(700, 500); // the activity bar's hover would take the click
        await page.locator(".context-view .hover-contents").waitFor({
          state: "hidden",
        });
        await offer.locator("button", { hasText: /^Resume$/ }).click();
        await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      }
      await editorTitleAction(page, "Accept").click();
      await inPanel(page, ".verdict", "The model's claim: doubled");
      await page.mouse.move(10, 10);
      await screenshot(page, "reload-accepted.png");
      assert.deepEqual(
        receiptsOnDisk(workspace).map((receipt) => [
          receipt.tool,
          receipt.tool_call_id,
        ]),
        [["edit_file", "call-1"]],
        "the edit was written once, after its Accept",
      );
      assert.equal(
        runRecord(workspace).some(
          (entry) => entry.state === "rejected" || entry.state === "stopped",
        ),
        false,
        "nothing in the run's record says rejected or stopped",
      );
    } catch (error) {
      await failureScreenshot(page, "failure-reload.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

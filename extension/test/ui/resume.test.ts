// A run survives its daemon, in a real VS Code against the real daemon: kill the daemon with -9
// while a proposal waits, and the run panel says the run was interrupted (not rejected) with
// what the receipts show it wrote; Resume starts a fresh daemon, the waiting proposal comes back
// as a fresh diff, and Accept finishes the run with nothing replayed. The status bar says the
// daemon stopped unexpectedly and a fresh one started, in its text and its tooltip alike.

import assert from "node:assert/strict";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  daemonSettings,
  demoWorkspace,
  editorTitleAction,
  failureScreenshot,
  openFolder,
  receiptsOnDisk,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

let browser: Browser;

/** The daemon serving `workspace`: a `counterfoil serve` process whose folder it is. */
function daemonPid(workspace: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (
        cwd === workspace &&
        argv.includes("counterfoil") &&
        argv.includes("serve")
      ) {
        return Number(entry);
      }
    } catch {
      // a process that ended, or not ours to read
    }
  }
  throw new Error(`no daemon serves ${workspace}`);
}

/** The Counterfoil status-bar item once its text matches `text`: its text and its tooltip. */
async function statusBarStory(page: Page, text: RegExp): Promise<string> {
  const item = page.locator(".statusbar-item", { hasText: text }).first();
  await item.waitFor({ timeout: 30_000 });
  await item.hover();
  const hover = page.locator(".workbench-hover, .monaco-hover", {
    hasText: "The daemon",
  });
  await hover.first().waitFor({ timeout: 10_000 });
  return `${await item.innerText()}\n${await hover.first().innerText()}`;
}

describe("a run survives its daemon", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("killed with a proposal waiting, the run is interrupted, and Resume asks again as a fresh diff", async () => {
    const step = stepTimer("resume");
    const script = writeResponses(
      "two-edits.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "edit_file", path: "app.py", old: "* 1", new: "* 2" },
      {
        tool: "edit_file",
        path: "app.py",
        old: "value * 2",
        new: "2 * value",
      },
      { final: "doubled" },
    );
    const workspace = demoWorkspace(
      "resume-after-kill",
      daemonSettings(script),
    );
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await startRun(page, "make double() double");
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      await editorTitleAction(page, "Accept").click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      step("second proposal waiting");

      process.kill(daemonPid(workspace), "SIGKILL");
      const panel = runPanel(page);
      const offer = panel.locator(".resumable");
      await offer.waitFor({ timeout: 60_000 });
      step("interrupted run offered");
      const said = await offer.innerText();
      assert.match(said, /Interrupted run: make double\(\) double/);
      assert.match(said, /Nothing was rejected/);
      assert.match(said, /Written: app\.py by call-1 \(edit_file\)/);
      assert.match(
        said,
        /Waiting for your answer when it stopped: call-2 edit_file app\.py/,
      );
      assert.equal(
        await panel.locator(".proposal.state-rejected").count(),
        0,
        "the waiting proposal is not marked rejected",
      );
      assert.equal(
        await panel.locator("#send").isVisible(),
        false,
        "no follow-up is offered after a crash",
      );
      await page
        .locator(".monaco-list-row", { hasText: "make double() double" })
        .first()
        .waitFor({ timeout: 30_000 }); // the receipts tree names the run from its record
      assert.equal(
        await page
          .locator(".notifications-toasts .notification-toast", {
            hasText: "rejected",
          })
          .count(),
        0,
        "no toast calls the interrupted proposal rejected",
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "resume-interrupted.png");

      // The status bar tells the same story: a fresh daemon, started after the crash.
      const status = await statusBarStory(
        page,
        /Counterfoil: unloaded \(restarted\)/,
      );
      assert.match(
        status,
        /The daemon is running; the model loads on the first run\.\s+The daemon stopped unexpectedly at \d\d:\d\d:\d\d; a fresh one started at \d\d:\d\d:\d\d\./,
      );
      await screenshot(page, "resume-status-after-crash.png");
      await page.mouse.move(10, 10);

      await offer.locator("button", { hasText: /^Resume$/ }).click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      step("fresh diff shown");
      await screenshot(page, "resume-fresh-diff.png");
      await editorTitleAction(page, "Accept").click();
      await panel
        .locator(".verdict", { hasText: "The model's claim: doubled" })
        .waitFor({ timeout: 60_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "resume-accepted.png");
      assert.match(
        await statusBarStory(page, /Counterfoil: (ready|unloaded)/),
        /State: (ready|unloaded)[\s\S]*The daemon stopped unexpectedly at .*; a fresh one started at/,
      );
      step("resumed run ended");

      assert.equal(
        readFileSync(join(workspace, "app.py"), "utf8").includes(
          "return 2 * value",
        ),
        true,
      );
      assert.deepEqual(
        receiptsOnDisk(workspace)
          .filter((receipt) => receipt.tool === "edit_file")
          .map((receipt) => receipt.tool_call_id),
        ["call-1", "call-2"],
        "nothing replayed",
      );
    } catch (error) {
      await failureScreenshot(page, "failure-resume.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

// What the editor says, in a real VS Code against the real daemon: refusals raise one toast per
// run, each step names what it did (a search its pattern, a disabled tool why it did nothing, a
// running command that it runs, a stopped command that it was stopped), a long run can be
// collapsed and jumped through, the receipts tree gives times to the second; a narrow side bar
// keeps the reason field and "New conversation" whole, and no diff of a proposal that no longer
// applied stays open; on a fresh install the walkthrough opens at the first activation, once.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, FrameLocator, Locator, Page } from "playwright-core";
import {
  answerCommandModal,
  freshEditor,
  makeWorkspace,
  openFolder,
  openPage,
  receiptsOnDisk,
  resizeSideBar,
  runCommand,
  runPanel,
  screenshot,
  showCounterfoilView,
  startBrowser,
  startRun,
  stateDir,
  stepTimer,
  waitForDaemon,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

const SLEEP = ["python", "-c", "import time; time.sleep(300)"];

let browser: Browser;

/** The step section's heading in the run panel, "Step 4: search_files …". */
function stepHeading(panel: FrameLocator, step: number): Locator {
  return panel.locator(`#step-0-${step} h3`);
}

/** Whether `node` lies whole inside the webview's viewport, its text not cut. */
async function whollyShown(node: Locator): Promise<boolean> {
  return node.evaluate((element) => {
    const box = element.getBoundingClientRect();
    return (
      box.width > 0 &&
      box.left >= 0 &&
      box.right <= document.documentElement.clientWidth + 0.5 &&
      box.top >= 0 &&
      box.bottom <= window.innerHeight + 0.5 &&
      element.scrollWidth <= element.clientWidth + 1
    );
  });
}

describe("what the editor says", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a long run: one refusal toast, steps in true words, Collapse all and Jump to step, a stopped command", async () => {
    const step = stepTimer("noise-long-run");
    const responses = writeResponses(
      "noise-long-run.jsonl",
      { tool: "read_file", path: ".env" },
      { tool: "read_file", path: "../outside.txt" },
      { tool: "read_file", path: "missing.txt" },
      { tool: "search_files", pattern: "value", path: "." },
      { tool: "edit_file", path: "app.py", old: "* 1", new: "* 2" },
      { tool: "read_file", path: "app.py" },
      { tool: "read_file", path: "greeting.py" },
      { tool: "read_file", path: "validate.py" },
      { tool: "run_command", argv: SLEEP },
      { final: "not reached" },
    );
    const workspace = makeWorkspace("noise-long-run", {
      "counterfoil.model": `scripted:${responses}`,
      "counterfoil.allowWrites": false,
      "counterfoil.allowedCommands": [SLEEP],
      "counterfoil.maxSteps": 12,
    });
    writeFileSync(join(workspace, ".env"), "TOKEN=secret\n");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "look around, then wait");
      const panel = runPanel(page);
      await answerCommandModal(page, "Accept");
      // While the approved command runs, the heading says so, not "generating…".
      await panel
        .locator(".step.streaming h3", {
          hasText: "Step 9: running the approved command…",
        })
        .waitFor({ timeout: 30_000 });
      step("command running");
      await page.mouse.move(10, 10);
      await screenshot(page, "noise-command-running.png");
      await panel.locator("#stop").click();
      await panel
        .locator(".verdict h3", { hasText: /^Stopped$/ })
        .waitFor({ timeout: 30_000 });
      step("stopped");

      assert.match(
        await panel.locator("#step-0-9").innerText(),
        /Observation \(approved, stopped before it ended\)/,
      );
      const command = receiptsOnDisk(workspace).find(
        (receipt) => receipt.tool === "run_command",
      );
      assert.equal(command?.exit_state, "error", "its receipt says error");
      assert.equal(
        await stepHeading(panel, 4).innerText(),
        'Step 4: search_files "value" in .',
      );
      assert.equal(
        await stepHeading(panel, 5).innerText(),
        "Step 5: no action (tool is not enabled: edit_file)",
      );
      assert.match(
        await panel.locator("#step-0-1").innerText(),
        /Only you see this: \.env is protected by/,
      );

      // Three refusals, one notification: the first, saying the rest are in the panel.
      await runCommand(page, "Notifications: Show Notifications");
      const center = page.locator(".notifications-center");
      await center.waitFor();
      const refusals = center.locator(".monaco-list-row", {
        hasText: "refused",
      });
      assert.equal(await refusals.count(), 1);
      assert.match(
        await refusals.innerText(),
        /later refusals in this run are listed in the run panel only/,
      );
      await screenshot(page, "noise-one-refusal.png");
      await page.keyboard.press("Escape");

      // A run of nine steps: open two observations, Collapse all closes them; Jump goes to one.
      await panel.locator("#step-0-6 details summary").click();
      await panel.locator("#step-0-7 details summary").click();
      assert.equal(await panel.locator("details[open]").count(), 2);
      await panel
        .locator(".run-tools button", { hasText: /^Collapse all$/ })
        .click();
      assert.equal(await panel.locator("details[open]").count(), 0);
      await panel.locator(".run-tools select.jump").selectOption("step-0-2");
      const top = await panel
        .locator("#step-0-2")
        .evaluate((element) => element.getBoundingClientRect().top);
      assert.ok(Math.abs(top) < 40, `step 2 is at the top (${top} px)`);
      await screenshot(page, "noise-jumped.png");

      // The receipts tree gives the run's time to the second.
      const receipts = page.locator(".pane", {
        has: page.locator(".pane-header", { hasText: "Receipts" }),
      });
      const run = receipts
        .locator(".monaco-list-row", { hasText: "look around, then wait" })
        .first();
      await run.waitFor({ timeout: 30_000 });
      assert.match(
        await run.locator(".label-description").innerText(),
        /^\d\d:\d\d:\d\d · /,
      );
      step("checked");
    } catch (error) {
      await screenshot(page, "failure-noise-long-run.png");
      throw error;
    } finally {
      await page.close();
    }
  });

  test("a narrow side bar keeps the reason field and New conversation whole; no outdated diff stays open", async () => {
    const responses = writeResponses(
      "noise-narrow.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "edit_file", path: "app.py", old: "value * 1", new: "value * 2" },
      { final: "doubled" },
    );
    const workspace = makeWorkspace("noise-narrow", {
      "counterfoil.model": `scripted:${responses}`,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await resizeSideBar(page, 230);
      await startRun(page, "make double() double");
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      const panel = runPanel(page);
      const reason = panel.locator(".proposal.state-pending .reason-input");
      await reason.waitFor({ timeout: 30_000 });
      assert.ok(await whollyShown(reason), "the reason field is in view");
      await page.mouse.move(10, 10);
      await screenshot(page, "noise-narrow-pending.png");

      // The file changes on disk: the proposal no longer applies; Reject answers it, and no
      // diff of it is left open when the run ends.
      const app = join(workspace, "app.py");
      writeFileSync(
        app,
        readFileSync(app, "utf8").replace("value * 1", "value * 3"),
      );
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: "no longer applies",
        })
        .locator(".monaco-button", { hasText: /^Reject$/ })
        .click({ timeout: 30_000 });
      await panel
        .locator(".verdict", { hasText: "The model's claim: doubled" })
        .waitFor({ timeout: 30_000 });
      await page
        .locator(".tabs-container .tab", { hasText: /edit_file app\.py/ })
        .waitFor({ state: "detached", timeout: 10_000 });
      const fresh = panel.locator("#new");
      await fresh.waitFor();
      assert.ok(await whollyShown(fresh), "New conversation is not clipped");
      await page.mouse.move(10, 10);
      await screenshot(page, "noise-narrow-ended.png");
    } catch (error) {
      await screenshot(page, "failure-noise-narrow.png");
      throw error;
    } finally {
      await page.close();
    }
  });

  test("on a fresh install the walkthrough opens at the first activation, once, without literal backticks", async () => {
    const editor = freshEditor("walkthrough");
    const folders = ["first", "second"].map((name) => {
      const folder = join(stateDir, "workspaces", `fresh-${name}`);
      mkdirSync(folder, { recursive: true });
      return folder;
    });
    let page: Page | undefined;
    try {
      page = await openPage(
        `${editor.url}/?folder=${encodeURIComponent(folders[0])}`,
      );
      await showCounterfoilView(page);
      const walkthrough = page.locator(".gettingStartedContainer", {
        hasText: "Pick or confirm the Python interpreter",
      });
      await walkthrough.first().waitFor({ timeout: 60_000 });
      const words = await walkthrough.first().innerText();
      assert.ok(!words.includes("`"), `no literal backticks: ${words}`);
      await page.mouse.move(10, 10);
      await screenshot(page, "noise-walkthrough-first-activation.png");

      // The same browser opens another folder, as a person does: no walkthrough this time.
      await page.goto(
        `${editor.url}/?folder=${encodeURIComponent(folders[1])}`,
      );
      await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
      await showCounterfoilView(page);
      await page
        .locator(".statusbar-item", { hasText: /Counterfoil/ })
        .first()
        .waitFor({ timeout: 60_000 });
      await page.waitForTimeout(3_000);
      assert.equal(
        await page.locator(".gettingStartedContainer").count(),
        0,
        "the second activation opens no walkthrough",
      );
    } catch (error) {
      if (page) await screenshot(page, "failure-noise-walkthrough.png");
      throw error;
    } finally {
      await page?.close();
      editor.stop();
    }
  });
});

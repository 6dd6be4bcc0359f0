// Branches in a real VS Code against the real daemon: a run interrupted and forked into two
// steered branches on the terminal, chosen by its goal, its branches shown side by side in the
// run panel and brought into view, one branch's diff against the root opened read only, and
// "Keep this branch" saying what it does and asking (it ends the run and discards the other
// branch), then applying its change as an ordinary review proposal whose receipt names the
// branch, after which the interrupted run is no longer offered to resume.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import {
  editorTitleAction,
  makeWorkspace,
  openFolder,
  python,
  receiptsOnDisk,
  resizeSideBar,
  runCommand,
  runPanel,
  screenshot,
  startBrowser,
  stepTimer,
  until,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

let browser: Browser;

const read = { tool: "read_file", path: "app.py" };
const double = {
  tool: "edit_file",
  path: "app.py",
  old: "value * 1",
  new: "value * 2",
};
const add = {
  tool: "edit_file",
  path: "app.py",
  old: "value * 1",
  new: "value + value",
};

/** Runs the CLI; `exits`: the statuses that mean it did its work (an unvalidated run exits 1). */
function counterfoil(args: string[], input = "", exits = [0]): string {
  const ran = spawnSync(python, ["-m", "counterfoil", ...args], {
    encoding: "utf8",
    input,
    timeout: 120_000,
  });
  assert.ok(exits.includes(ran.status ?? -1), `${ran.stdout}${ran.stderr}`);
  return ran.stdout;
}

/** A run stopped with Ctrl-C on the terminal while its edit waited for an answer: interrupted,
 * its checkpoint paused after the read. */
async function interruptedRun(workspace: string): Promise<void> {
  const parent = writeResponses("branches-parent.jsonl", read, double, {
    final: "doubled",
  });
  const child = spawn(
    python,
    [
      "-m",
      "counterfoil",
      "agent",
      "double the value",
      "--root",
      workspace,
      "--model",
      `scripted:${parent}`,
      "--allow-writes",
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let said = "";
  let interrupted = false;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no approval was asked: ${said}`));
    }, 120_000);
    child.stdout.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      if (!interrupted && said.includes("Approve? [y/N]")) {
        interrupted = true; // one Ctrl-C: a second one would stop the run's own closing
        child.kill("SIGINT");
      }
    });
    child.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  assert.match(said, /run ended: interrupted/);
}

/** A run interrupted with its edit waiting, forked into two branches that each go on to write
 * the value as an addition; its run id. */
async function forkedRun(workspace: string): Promise<string> {
  await interruptedRun(workspace);
  const runId = counterfoil(["sessions", "--root", workspace]).split(/\s/)[0];
  // The fork goes on after the parent's read and its edit's response.
  const fork = writeResponses("branches-fork.jsonl", read, double, add, {
    final: "wrote it as an addition",
  });
  counterfoil([
    "fork",
    runId,
    "--root",
    workspace,
    "--model",
    `scripted:${fork}`,
    "--allow-writes",
    "--steer",
    "use addition",
    "--steer",
    "try addition too",
  ]);
  return runId;
}

/** Show Branches, choosing the run by its goal (the row shows its start time and id too). */
async function showBranches(page: Page, runId: string): Promise<string> {
  await runCommand(page, "Counterfoil: Show Branches");
  const row = page
    .locator(".quick-input-list .monaco-list-row", { hasText: runId })
    .first();
  await row.waitFor({ timeout: 30_000 });
  const said = await row.innerText();
  await row.click();
  return said;
}

/** Where the top of the panel's element lies in the panel's viewport, in pixels. */
function topInView(node: Locator): Promise<number> {
  return node.evaluate((element) => element.getBoundingClientRect().top);
}

describe("branches of a forked run in the run panel", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("the branches side by side, brought into view; Show diff compares with the root, read only; Keep this branch applies it through the review, its receipt names the branch, and the run it came from is no longer offered", async () => {
    const step = stepTimer("branches");
    const workspace = makeWorkspace("branches");
    const runId = await forkedRun(workspace);
    step("run forked on the terminal");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      const panel = runPanel(page);
      const offer = panel.locator(".resumable", {
        hasText: "Interrupted run: double the value",
      });
      await offer.waitFor({ timeout: 30_000 });
      const choice = await showBranches(page, runId);
      assert.match(
        choice,
        new RegExp(
          `double the value[\\s\\S]*\\d\\d:\\d\\d:\\d\\d · (paused|interrupted)[\\s\\S]*${runId}`,
        ),
        "the run picker shows the goal, the start time and state, and the id",
      );
      const first = panel.locator(`.branch[data-branch="${runId}.1"]`);
      const second = panel.locator(`.branch[data-branch="${runId}.2"]`);
      await first.waitFor({ timeout: 30_000 });
      await second.waitFor();
      const facts = await first.innerText();
      assert.match(facts, /Steering: use addition/);
      assert.match(facts, /ended: waiting for a choice/);
      assert.match(facts, /Files changed: app\.py/);
      assert.match(facts, /Prefill avoided/);
      assert.match(facts, /The model's claim: wrote it as an addition/);
      assert.match(await second.innerText(), /Steering: try addition too/);
      await page.mouse.move(10, 10);
      await screenshot(page, "branches-stacked.png");
      // The panel scrolled to its end, Show Branches brings the branches into view.
      const section = panel.locator("#branches");
      await section.evaluate(() =>
        window.scrollTo(0, document.documentElement.scrollHeight),
      );
      assert.ok(
        (await topInView(section)) < -50,
        "the branches are scrolled out of view above",
      );
      await showBranches(page, runId);
      await until(async () => Math.abs(await topInView(section)) < 5);
      await page.mouse.move(10, 10);
      await screenshot(page, "branches-revealed.png");
      // A wide side bar: the branches stand in columns, one beside the other.
      await resizeSideBar(page, 760);
      const [left, right] = [
        await first.boundingBox(),
        await second.boundingBox(),
      ];
      assert.ok(left && right, "both branches are drawn");
      assert.ok(
        Math.abs(left.y - right.y) < 2 && right.x > left.x + left.width,
        `side by side: ${JSON.stringify([left, right])}`,
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "branches-side-by-side.png");
      step("branches shown, stacked then side by side");

      await resizeSideBar(page, 300); // room for the diff's two sides
      await first.locator("button", { hasText: "Show diff" }).click();
      await page
        .locator(".tabs-container .tab.active", {
          hasText: `app.py (root ↔ ${runId}.1`,
        })
        .waitFor({ timeout: 30_000 });
      const diff = page.locator(
        ".editor-group-container.active .monaco-diff-editor",
      );
      await diff.waitFor();
      // The branch's side cannot be typed into: what Keep applies is what its checks saw.
      await diff
        .locator(".editor.modified .lines-content .view-line")
        .first()
        .click({ position: { x: 5, y: 5 } });
      await page.keyboard.type("# typed in the branch\n");
      await page
        .locator(".monaco-editor-overlaymessage", { hasText: /read-?only/i })
        .waitFor({ timeout: 10_000 });
      assert.equal(
        await page.locator(".tabs-container .tab.active.dirty").count(),
        0,
        "the branch's copy is not changed",
      );
      await screenshot(page, "branch-diff.png");
      step("diff shown, read only");

      // Keep says what it does before it does it, and asks: it ends the run and a sibling.
      const would = new RegExp(
        `Keep applies 1 change to the root, each asked like any edit, ends run ${runId}, which can then no longer be resumed and discards ${runId}\\.2`,
      );
      assert.match(await first.locator(".keep-would").innerText(), would);
      await first.locator("button", { hasText: "Keep this branch" }).click();
      const question = page.locator(".monaco-dialog-box");
      await question.waitFor({ timeout: 30_000 });
      assert.match(await question.innerText(), would);
      await screenshot(page, "branch-keep-question.png");
      await question
        .locator(".dialog-buttons .monaco-button", { hasText: /^Keep$/ })
        .click();
      await waitForProposalDiff(page, /write_file app\.py/);
      await screenshot(page, "branch-keep-proposal.png");
      await editorTitleAction(page, "Accept").click();
      await waitForNotification(page, new RegExp(`Kept ${runId}\\.1`));
      assert.match(
        readFileSync(join(workspace, "app.py"), "utf8"),
        /return value \+ value/,
      );
      const last = receiptsOnDisk(workspace).at(-1);
      assert.equal(last?.tool, "write_file");
      assert.equal(last?.approval?.via, `editor, selecting branch ${runId}.1`);
      await first
        .locator(".badge", { hasText: "kept" })
        .waitFor({ timeout: 30_000 });
      await second.locator(".badge", { hasText: "discarded" }).waitFor();
      // The run the branch came from ended with it: no Resume is offered for it.
      await offer.waitFor({ state: "detached", timeout: 30_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "branch-kept.png");
      step("branch kept, its run no longer offered");
    } finally {
      await page.close();
    }
  });
});

// Branches in a real VS Code against the real daemon: a run made and forked into two steered
// branches on the terminal, its branches shown side by side in the run panel, one branch's diff
// against the root opened, and "Keep this branch" applying its change as an ordinary review
// proposal whose receipt names the branch.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
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
  old: "value * 2",
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

/** A run that doubled the value (approved on the terminal), forked into two branches that each
 * go on to write it as an addition; its run id. */
function forkedRun(workspace: string): string {
  const parent = writeResponses("branches-parent.jsonl", read, double, {
    final: "doubled",
  });
  counterfoil(
    [
      "agent",
      "double the value",
      "--root",
      workspace,
      "--model",
      `scripted:${parent}`,
      "--allow-writes",
    ],
    "y\n",
    [0, 1],
  );
  const runId = String(receiptsOnDisk(workspace)[0]?.run_id);
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

describe("branches of a forked run in the run panel", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("the branches side by side; Show diff compares with the root; Keep this branch applies it through the review and its receipt names the branch", async () => {
    const step = stepTimer("branches");
    const workspace = makeWorkspace("branches");
    const runId = forkedRun(workspace);
    step("run forked on the terminal");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await runCommand(page, "Counterfoil: Show Branches");
      await page
        .locator(".quick-input-list .monaco-list-row", { hasText: runId })
        .first()
        .click();
      const panel = runPanel(page);
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

      await first.locator("button", { hasText: "Show diff" }).click();
      await page
        .locator(".tabs-container .tab.active", {
          hasText: `app.py (root ↔ ${runId}.1)`,
        })
        .waitFor({ timeout: 30_000 });
      await page
        .locator(".editor-group-container.active .monaco-diff-editor")
        .waitFor();
      await screenshot(page, "branch-diff.png");
      step("diff shown");

      await first.locator("button", { hasText: "Keep this branch" }).click();
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
      assert.equal(
        (last?.approval as { via?: string } | undefined)?.via,
        `editor, selecting branch ${runId}.1`,
      );
      await first
        .locator(".badge", { hasText: "kept" })
        .waitFor({ timeout: 30_000 });
      await second.locator(".badge", { hasText: "discarded" }).waitFor();
      await page.mouse.move(10, 10);
      await screenshot(page, "branch-kept.png");
      step("branch kept");
    } finally {
      await page.close();
    }
  });
});

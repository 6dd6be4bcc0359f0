// A conversation in the run panel, in a real VS Code against the real daemon: one hunk of two
// dropped and the proposed side edited before Accept (the daemon writes exactly that text), a
// command rejected with a reason the model reads, a follow-up that continues the conversation,
// Revert from the receipts tree through the same diff approval, and Stop during generation on
// the tiny model, its latency printed.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  answerCommandQuestion,
  changeSettings,
  clickRevert,
  confirmAsWalkthrough,
  editorTitleAction,
  makeWorkspace,
  python,
  receiptsOnDisk,
  screenshot,
  showCounterfoilView,
  startBrowser,
  stepTimer,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
  runPanel,
  openFolder,
} from "./workbench";

let browser: Browser;

/**
 * Stop's target, cancelled within half a second of the request, is measured where a loaded
 * machine cannot fail a test: bench/lsp_roundtrip.py. Here the latency is printed, and Stop must
 * end a run whose model would otherwise go on for 200,000 tokens: the panel shows it stopped.
 */
const ORIGINAL_DOC =
  '"""A tiny module whose test fails until one character is fixed."""';
const NEW_DOC = '"""Doubling, fixed."""';

/** A script whose edit has two hunks: the docstring and the fix. */
function twoHunkScript(folder: string, original: string): string {
  const rewritten = original
    .replace(ORIGINAL_DOC, NEW_DOC)
    .replace("value * 1", "value * 2");
  const lines = [
    { tool: "read_file", path: "app.py" },
    { tool: "write_file", path: "app.py", content: rewritten },
    { tool: "run_command", argv: ["python", "validate.py"] },
    { final: "rewrote app.py and validated it" },
  ];
  const path = join(folder, ".vscode", "two-hunks.jsonl");
  writeFileSync(path, lines.map((line) => JSON.stringify(line)).join("\n"));
  return path;
}

function setModel(folder: string, model: string, extra: object = {}): void {
  const file = join(folder, ".vscode/settings.json");
  const settings = JSON.parse(readFileSync(file, "utf8")) as Record<
    string,
    unknown
  >;
  const changed = { ...settings, "counterfoil.model": model, ...extra };
  confirmAsWalkthrough(folder, changed);
  writeFileSync(file, JSON.stringify(changed, null, 2));
}

describe("a conversation in the run panel", () => {
  let page: Page;
  let workspace: string;
  let original: string;

  before(async () => {
    browser = await startBrowser();
    workspace = makeWorkspace("conversation");
    original = readFileSync(join(workspace, "app.py"), "utf8");
    setModel(workspace, `scripted:${twoHunkScript(workspace, original)}`);
    page = await openFolder(workspace);
    await waitForDaemon(page);
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("drop one hunk of two, edit the proposal, reject a command with a reason, then a follow-up continues", async () => {
    const step = stepTimer("conversation");
    const panel = runPanel(page);
    await panel.locator("#message").fill("tidy app.py");
    await panel.locator("#send").click();
    await waitForProposalDiff(page, /write_file app\.py \(call-\d+\)/);
    const proposal = panel.locator(".proposal.state-pending", {
      hasText: "write_file app.py",
    });
    await proposal.waitFor({ timeout: 30_000 });
    assert.equal(await proposal.locator(".hunk").count(), 2);
    // Drop the docstring hunk; the proposed side follows.
    await proposal.locator('input[data-hunk="0"]').uncheck();
    const modified = page.locator(
      ".editor-group-container.active .monaco-diff-editor .editor.modified .view-lines",
    );
    await modified.filter({ hasText: ORIGINAL_DOC }).waitFor();
    // Edit the proposed side by hand, then Accept with Ctrl+Enter.
    await modified.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("\n# reviewed by hand\n");
    await page.mouse.move(10, 10);
    await screenshot(page, "hunk-dropped-and-edited.png");
    await modified.click();
    await page.keyboard.press("Control+Enter");
    step("edited proposal accepted");
    const expected = `${original.replace("value * 1", "value * 2")}\n# reviewed by hand\n`;
    await answerCommandQuestion(page, "Reject");
    await panel.locator(".verdict").waitFor({ timeout: 30_000 });
    assert.equal(readFileSync(join(workspace, "app.py"), "utf8"), expected);
    const written = receiptsOnDisk(workspace).find(
      (receipt) => receipt.tool === "write_file",
    );
    assert.equal(written?.approval?.modified, true, JSON.stringify(written));
    assert.match(
      await panel.locator(".turn").first().innerText(),
      /the person changed your proposal before approving/,
      "the model's observation says what was applied",
    );
    step("verdict of the first turn");

    // A follow-up continues the same conversation; its edit is rejected with a reason.
    await panel.locator("#message").fill("why keep the old docstring?");
    await panel.locator("#send").click();
    await waitForProposalDiff(page, /write_file app\.py \(call-\d+\)/);
    const second = panel.locator(".turn").nth(1);
    await second.waitFor();
    assert.match(
      await second.locator(".goal").innerText(),
      /Follow-up: why keep the old docstring/,
    );
    const edit = second.locator(".proposal.state-pending", {
      hasText: "write_file app.py",
    });
    await edit.waitFor({ timeout: 30_000 });
    await edit.locator(".reason-input").fill("keep the docstring as it is");
    await page.mouse.move(10, 10);
    await screenshot(page, "reject-with-reason-typed.png");
    await edit.locator("button.reject").click();
    await answerCommandQuestion(page, "Reject");
    await second
      .locator(".step", {
        hasText: "operator denied the tool action: keep the docstring as it is",
      })
      .first()
      .waitFor({ timeout: 30_000 });
    await second.locator(".verdict").waitFor({ timeout: 30_000 });
    await page.mouse.move(10, 10);
    await screenshot(page, "follow-up-with-reason.png");
    assert.equal(readFileSync(join(workspace, "app.py"), "utf8"), expected);
    step("follow-up answered");
  });

  test("Revert from the receipts tree goes through the same diff approval and restores the bytes", async () => {
    const step = stepTimer("revert");
    await showCounterfoilView(page);
    await clickRevert(
      page,
      "write_file app.py",
      "why keep the old docstring?",
      page.locator(".tabs-container .tab.active", {
        hasText: /revert app\.py/,
      }),
    );
    await waitForProposalDiff(page, /revert app\.py/);
    await page.mouse.move(10, 10);
    await screenshot(page, "revert-diff.png");
    await editorTitleAction(page, "Accept").click();
    await waitForNotification(page, /restored app\.py/);
    assert.equal(readFileSync(join(workspace, "app.py"), "utf8"), original);
    await screenshot(page, "reverted.png");
    step("reverted");
  });

  test("Stop during generation: cancelled at once, the latency measured", async () => {
    const step = stepTimer("stop");
    const built = spawnSync(
      python,
      [
        "-c",
        "from counterfoil.testing.tiny_model import cached_tiny_model; print(cached_tiny_model())",
      ],
      { encoding: "utf8" },
    );
    assert.equal(built.status, 0, built.stderr);
    const tiny = built.stdout.trim();
    await changeSettings(page, tiny, () =>
      setModel(workspace, tiny, {
        "counterfoil.constrainedDecoding": false,
        "counterfoil.maxTokens": 200000,
      }),
    );
    step("tiny model ready");
    const panel = runPanel(page);
    await panel.locator("#new").click();
    await panel.locator("#message").fill("say a lot");
    await panel.locator("#send").click();
    await panel.locator(".step.streaming").waitFor({ timeout: 120_000 });
    step("generating");
    const latency = await panel.locator("#stop").evaluate(
      (stop) =>
        new Promise<number>((done) => {
          const started = performance.now();
          const observer = new MutationObserver(() => {
            if (document.querySelector(".turn.status-stopped")) {
              observer.disconnect();
              done(performance.now() - started);
            }
          });
          observer.observe(document.body, { subtree: true, childList: true });
          (stop as HTMLButtonElement).click();
        }),
    );
    console.log(
      `[stop] Stop run → cancelled shown in the panel: ${latency.toFixed(0)} ms`,
    );
    await screenshot(page, "stopped-during-generation.png");
    assert.match(
      await panel.locator(".turn.status-stopped").last().innerText(),
      /cancelled/,
    );
  });
});

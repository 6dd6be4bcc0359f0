// The model on the receipt, in a real VS Code against the real daemon with a model in the
// daemon (MLX weights set by hand to answer a script): once its edit is accepted, the receipts
// tree's row for the run, the receipt's tooltip and the run panel's verdict name the model that
// proposed it in the same words (its spec, its weights' digest in short form, the engine).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Locator, Page } from "playwright-core";
import {
  failureScreenshot,
  makeWorkspace,
  openFolder,
  receiptsPane,
  runPanel,
  screenshot,
  scriptedWeightsModel,
  showCounterfoilView,
  startBrowser,
  stepTimer,
  waitForDaemon,
  waitForVerdictInTree,
} from "./workbench";

const GOAL = "double the value in app.py";
const ANSWERS = [
  JSON.stringify({ tool: "read_file", path: "app.py" }),
  JSON.stringify({ tool: "edit_file", path: "app.py", old: "1", new: "2" }),
  JSON.stringify({ final: "doubled" }),
];
const MODEL_WORDS =
  /receipt-model-scripted-weights\S* · weights [0-9a-f]{12} · MLX, compute /;

let browser: Browser;

/** The tooltip VS Code shows for a tree row, once the mouse rests on it. */
async function tooltipOf(
  page: Page,
  row: Locator,
  shot: string,
): Promise<string> {
  const box = await row.boundingBox();
  assert.ok(box, "the row is on screen");
  // The hover comes after the mouse rests: move onto the row in steps, then once more.
  await page.mouse.move(box.x + 20, box.y + box.height / 2, { steps: 5 });
  await page.mouse.move(box.x + 60, box.y + box.height / 2, { steps: 5 });
  const hover = page
    .locator(".workbench-hover, .monaco-hover, .hover-contents")
    .filter({ visible: true })
    .first();
  await hover.waitFor({ timeout: 15_000 });
  const text = await hover.innerText();
  await screenshot(page, shot);
  await page.mouse.move(700, 500);
  await hover.waitFor({ state: "hidden", timeout: 10_000 }).catch(() => {});
  return text;
}

describe("the model on the receipt", () => {
  let page: Page | undefined;

  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("the run's row, the receipt's tooltip and the verdict name the model: spec, short digest, engine", async () => {
    const step = stepTimer("receipt-model");
    const model = scriptedWeightsModel("receipt-model", ANSWERS);
    const workspace = makeWorkspace("receipt-model", {
      "counterfoil.model": model,
      // The weights answer with one token each: a grammar would not let it through.
      "counterfoil.constrainedDecoding": false,
      "counterfoil.maxTokens": 16,
    });
    page = await openFolder(workspace);
    await waitForDaemon(page);
    step("daemon ready");
    const panel = runPanel(page);
    await panel.locator("#message").fill(GOAL);
    await panel.locator("#send").click();
    const receipts = receiptsPane(page);
    try {
      await panel
        .locator(".proposal.state-pending button.accept")
        .click({ timeout: 120_000 });
      await panel
        .locator("article.turn .verdict")
        .waitFor({ timeout: 120_000 });
      await showCounterfoilView(page);
      await receipts
        .locator(".monaco-list-row", { hasText: "edit_file app.py" })
        .first()
        .waitFor({ timeout: 30_000 });
      await waitForVerdictInTree(page, GOAL);
    } catch (error) {
      await failureScreenshot(page, "failure-receipt-model.png");
      throw error;
    }
    step("edit receipted");

    const receipt = await tooltipOf(
      page,
      receipts
        .locator(".monaco-list-row", { hasText: "edit_file app.py" })
        .first(),
      "receipt-model-receipt-tooltip.png",
    );
    assert.match(receipt, /proposed by /);
    assert.match(receipt, MODEL_WORDS);
    const run = await tooltipOf(
      page,
      receipts.locator(".monaco-list-row", { hasText: GOAL }).first(),
      "receipt-model-run-tooltip.png",
    );
    assert.match(run, /model: /);
    assert.match(run, MODEL_WORDS);
    const verdict = await panel
      .locator("article.turn .verdict .model-note", { hasText: "Model: " })
      .first()
      .innerText();
    assert.match(verdict, MODEL_WORDS);
  });
});

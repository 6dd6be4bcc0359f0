// What the model is doing, in the run panel, in a real VS Code against the real daemon with a
// model in the daemon (MLX weights set by hand to answer a script): the goal is the run's first
// line as soon as Run is pressed (it leaves the goal box), and the run's first item says what the
// model's loading did and what each step is doing (prefill, generation), with no rate over a
// one-token step.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  failureScreenshot,
  makeWorkspace,
  openFolder,
  runPanel,
  screenshot,
  scriptedWeightsModel,
  startBrowser,
  stepTimer,
  waitForDaemon,
} from "./workbench";

const GOAL = "read app.py and say what it does";
const ANSWERS = [
  JSON.stringify({ tool: "read_file", path: "app.py" }),
  JSON.stringify({ final: "it doubles a value" }),
];

let browser: Browser;

describe("the model's activity in the run panel", () => {
  let page: Page | undefined;

  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("the goal is the run's first line at once; loading, prefill and generation come next, with no rate over one token", async () => {
    const step = stepTimer("activity");
    const model = scriptedWeightsModel("activity", ANSWERS);
    const workspace = makeWorkspace("activity", {
      "counterfoil.model": model,
      // The weights answer with one token each: a grammar would not let it through.
      "counterfoil.constrainedDecoding": false,
      "counterfoil.maxTokens": 16,
    });
    page = await openFolder(workspace);
    await waitForDaemon(page);
    step("daemon ready");
    const panel = runPanel(page);
    const message = panel.locator("#message");
    await message.fill(GOAL);
    await panel.locator("#send").click();
    const turn = panel.locator("article.turn").first();
    try {
      await turn
        .locator("h2.goal", { hasText: GOAL })
        .waitFor({ timeout: 30_000 });
      assert.equal(
        await message.inputValue(),
        "",
        "the goal left the box: it is the run's first line",
      );
      step("goal shown");
      await turn.locator(".verdict").waitFor({ timeout: 180_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-activity.png");
      throw error;
    }
    step("run ended");
    await page.mouse.move(10, 10);
    await turn.locator("h2.goal").scrollIntoViewIfNeeded();
    await screenshot(page, "activity-run-ended.png");

    // The activity is the turn's first item, right under the goal.
    assert.equal(
      await turn.evaluate(
        (node) => node.querySelector("h2.goal")?.nextElementSibling?.className,
      ),
      "activity",
    );
    const lines = await turn.locator("ul.activity li").allInnerTexts();
    assert.equal(new Set(lines).size, lines.length, `each line once: ${lines}`);
    assert.match(lines[0], /^Model: loading \S*activity-scripted-weights/);
    assert.ok(
      lines.some((line) => /^Model: \S+ loaded in \d+\.\d\d s$/.test(line)),
      `the load and its time: ${lines.join(" | ")}`,
    );
    assert.match(
      lines[lines.length - 1],
      /^Step 2: prefill [\d,]+ tokens; generated \d+ tokens?$/,
    );
    const said = await turn.innerText();
    assert.doesNotMatch(said, /tok(ens)?\/s/, "no rate over a one-token step");
    const status = await page
      .locator(".statusbar-item", { hasText: "Counterfoil:" })
      .first()
      .innerText();
    assert.doesNotMatch(status, /tok\/s/);
  });
});

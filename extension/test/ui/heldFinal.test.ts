// With `counterfoil.checkFinalAnswer` on, a final answer the run's record does not bear out is
// shown in the run panel as not taken as the end, with the model's words and what it was told;
// the run goes on in the same turn and ends at the next final answer.

import assert from "node:assert/strict";
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
  writeResponses,
} from "./workbench";

let browser: Browser;

describe("a final answer not taken as the end", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("the run panel shows the held final answer, what the model was told, and the run going on to its end", async () => {
    const script = writeResponses(
      "held-final.jsonl",
      { final: "doubled it" },
      { tool: "read_file", path: "app.py" },
      { final: "could not" },
    );
    const workspace = demoWorkspace("held-final", {
      ...daemonSettings(script),
      "counterfoil.checkFinalAnswer": true,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "make double() in app.py double its argument");
      const panel = runPanel(page);
      await panel
        .locator(".verdict", { hasText: "could not" })
        .waitFor({ timeout: 60_000 });
      const held = panel.locator("h3", {
        hasText: "Step 1: final answer, not taken as the end",
      });
      await held.waitFor();
      const step = panel.locator(".step", { has: held });
      assert.match(await step.innerText(), /doubled it/);
      assert.match(
        await step.innerText(),
        /Observation: Not ended yet: your answer says the task is done/,
      );
      await step.locator("summary", { hasText: "Observation" }).click();
      assert.match(
        await step.innerText(),
        /app\.py \(named by the task\) is unchanged\.[\s\S]*Your next reply: \{"tool": "read_file", "path": "app\.py"\}/,
      );
      assert.equal(
        await panel.locator("h3", { hasText: "Step 3: final answer" }).count(),
        1,
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "held-final.png");
    } catch (error) {
      await failureScreenshot(page, "failure-held-final.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

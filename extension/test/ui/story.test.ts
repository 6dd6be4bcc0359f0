// A resumed run keeps its story, in a real VS Code against the real daemon: the window is
// reloaded while the run's second edit waits, and Resume shows the steps taken before the
// reload, retold from the run's record and marked as before the interruption; the steps go on
// from their numbers, and a follow-up's steps after them.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  daemonSettings,
  demoWorkspace,
  editorTitleAction,
  failureScreenshot,
  inPanel,
  openFolder,
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

describe("a resumed run keeps its story", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("after a reload, Resume shows the earlier steps from the run's record, marked; step numbers go on, a follow-up's too", async () => {
    const step = stepTimer("story");
    const script = writeResponses(
      "story.jsonl",
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
    const workspace = demoWorkspace("story", daemonSettings(script));
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "make double() double");
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      await editorTitleAction(page, "Accept").click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      step("second proposal waiting");

      await reload(page, "browser");
      await waitForDaemon(page);
      const offer = await inPanel(page, ".resumable");
      step("offered after the reload");
      await page.mouse.move(700, 500);
      await offer.locator("button", { hasText: /^Resume$/ }).click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      const turn = await inPanel(page, "article.turn");
      const note = turn.locator(".earlier-note").first();
      await note.waitFor({ timeout: 30_000 });
      assert.equal(
        await note.innerText(),
        "Steps before the interruption, from the run's record:",
      );
      const earlier = await turn.locator(".step.earlier h3").allInnerTexts();
      assert.deepEqual(earlier, [
        "Step 1: read_file app.py",
        "Step 2: edit_file app.py",
      ]);
      assert.match(
        await turn.locator(".step.earlier").nth(1).innerText(),
        /Observation: edited app\.py/,
      );
      await turn
        .locator(".earlier-note", { hasText: "Resumed here." })
        .waitFor();
      step("earlier steps shown");
      await page.mouse.move(10, 10);
      await turn.locator("h2.goal").scrollIntoViewIfNeeded();
      await screenshot(page, "story-resumed.png");

      await editorTitleAction(page, "Accept").click();
      const verdict = await inPanel(page, ".verdict", "doubled");
      const headings = await turn
        .locator(".step:not(.earlier) h3")
        .allInnerTexts();
      assert.deepEqual(headings, [
        "Step 3: edit_file app.py",
        "Step 4: final answer",
      ]);
      await verdict.scrollIntoViewIfNeeded();
      await screenshot(page, "story-resumed-ended.png");
      step("resumed run ended");

      const message = await inPanel(page, "#message");
      await message.fill("and say so");
      await (await inPanel(page, "#send")).click();
      const followUp = await inPanel(
        page,
        "article.turn h2.goal",
        "Follow-up: and say so",
      );
      const followUpTurn = followUp.locator("xpath=..");
      const first = followUpTurn.locator(".step h3").first();
      await first.waitFor({ timeout: 60_000 });
      assert.match(await first.innerText(), /^Step 5: /);
      step("follow-up numbered on");
      await page.mouse.move(10, 10);
      await screenshot(page, "story-follow-up.png");
    } catch (error) {
      await failureScreenshot(page, "failure-story.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

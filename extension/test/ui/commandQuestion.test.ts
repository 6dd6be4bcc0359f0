// A command's question, in a real VS Code against the real daemon: never a modal. It is asked in
// the run panel and a notification (argv, folder, how it runs; Accept, Reject, Reject with
// Reason), so Pause and Stop stay at hand while it waits; Escape closes the notification and
// answers nothing; Reject with Reason from the notification center reaches the model.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  commandQuestion,
  failureScreenshot,
  makeWorkspace,
  openFolder,
  runCommand,
  runPanel,
  screenshot,
  startBrowser,
  stepTimer,
  waitForDaemon,
  writeResponses,
} from "./workbench";

const WAIT = ["python", "-c", "print('checked')"];
const REASON = "not now, read the tests first";

let browser: Browser;

describe("a command's question", () => {
  let page: Page | undefined;

  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("is asked in the panel and a notification, never a modal: Pause and Stop stay at hand, Escape answers nothing, Reject with Reason reaches the model", async () => {
    const step = stepTimer("command-question");
    const responses = writeResponses(
      "command-question.jsonl",
      { tool: "run_command", argv: WAIT },
      { final: "did not run it" },
    );
    const workspace = makeWorkspace("command-question", {
      "counterfoil.model": `scripted:${responses}`,
      "counterfoil.allowedCommands": [WAIT],
    });
    page = await openFolder(workspace);
    await waitForDaemon(page);
    const panel = runPanel(page);
    await panel.locator("#message").fill("check something");
    await panel.locator("#send").click();
    const toast = commandQuestion(page);
    const proposal = panel.locator(".proposal.state-pending");
    try {
      await toast.waitFor({ timeout: 60_000 });
      await proposal.waitFor({ timeout: 30_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-command-question.png");
      throw error;
    }
    step("asked");
    const asked = await toast.innerText();
    assert.ok(asked.includes(`argv: ${JSON.stringify(WAIT)}`), asked);
    assert.ok(asked.includes(`cwd: ${workspace}`), asked);
    assert.match(asked, /Runs (unconfined|confined|in review mode)/);
    for (const answer of ["Accept", "Reject", "Reject with Reason…"]) {
      await toast
        .locator(".monaco-button", { hasText: answer })
        .first()
        .waitFor();
    }
    assert.equal(
      await page.locator(".monaco-dialog-box").count(),
      0,
      "no modal",
    );
    assert.equal(await panel.locator("#pause").isEnabled(), true);
    assert.equal(await panel.locator("#stop").isEnabled(), true);
    assert.equal(await panel.locator("#steer").isEnabled(), true);
    await screenshot(page, "command-question-asked.png");

    // Escape closes the notification; the question stays open.
    await page
      .locator(".monaco-workbench")
      .click({ position: { x: 700, y: 400 } });
    await page.keyboard.press("Escape");
    await toast.waitFor({ state: "hidden", timeout: 10_000 });
    await page.waitForTimeout(1_000);
    assert.equal(
      await proposal.count(),
      1,
      "Escape answered nothing: the command still waits",
    );
    step("escape answered nothing");

    await runCommand(page, "Notifications: Show Notifications");
    const listed = page
      .locator(".notifications-center .monaco-list-row", {
        hasText: "Counterfoil wants to run a command",
      })
      .first();
    await listed.waitFor({ timeout: 10_000 });
    await listed
      .locator(".monaco-button", { hasText: "Reject with Reason…" })
      .click();
    const input = page.locator(".quick-input-widget input");
    await page
      .locator(".quick-input-widget", { hasText: "The model reads this" })
      .waitFor();
    await input.fill(REASON);
    await page.keyboard.press("Enter");
    const turn = panel.locator("article.turn").last();
    try {
      await turn.locator(".verdict").waitFor({ timeout: 60_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-command-question-reason.png");
      throw error;
    }
    step("rejected with a reason");
    await page.mouse.move(10, 10);
    await screenshot(page, "command-question-rejected.png");
    assert.match(await turn.innerText(), /1 effect rejected/);
    assert.match(
      await turn.locator(".step").first().innerText(),
      new RegExp(REASON),
    );
  });
});

// Pause and steer, in a real VS Code against the real daemon: Pause while an approved command
// runs lets the command finish and leave its receipt, then the run stops at that boundary and
// the panel offers it as paused; Steer and resume goes on with one message from the person,
// which the run's checkpoint keeps, and nothing is replayed.

import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  answerCommandQuestion,
  editorTitleAction,
  failureScreenshot,
  makeWorkspace,
  openFolder,
  receiptsOnDisk,
  receiptsPane,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  stepTimer,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

// Runs until the test writes `go` (once the pause is taken), so the Pause click lands while it
// runs however slow the machine is.
const WAIT = [
  "python",
  "-c",
  "import pathlib, time\nwhile not pathlib.Path('go').exists(): time.sleep(0.05)",
];
const STEERING = "keep the change to one line";
const SECOND_STEERING = "and keep the comment";

let browser: Browser;

/** Every file the run's session folder holds, as text. */
function sessionText(workspace: string): string {
  const sessions = join(workspace, ".counterfoil/sessions");
  return readdirSync(sessions, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), "latin1"))
    .join("\n");
}

/** Each decision of the only run of `workspace`, from its record: "call-1 withdrawn". */
function decisions(workspace: string): string[] {
  const sessions = join(workspace, ".counterfoil/sessions");
  const [run] = readdirSync(sessions, { withFileTypes: true }).filter((entry) =>
    entry.isDirectory(),
  );
  return readFileSync(join(sessions, run.name, "decisions.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.kind === "decision")
    .map((entry) => `${String(entry.call_id)} ${String(entry.state)}`);
}

/** The steering messages the only run of `workspace` records as the person's. */
function steeringRecorded(workspace: string): string[] {
  const sessions = join(workspace, ".counterfoil/sessions");
  const [run] = readdirSync(sessions, { withFileTypes: true }).filter((entry) =>
    entry.isDirectory(),
  );
  return readFileSync(join(sessions, run.name, "decisions.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.kind === "steered")
    .map((entry) => String(entry.text));
}

/** The text of every notification shown so far (toasts and the notification center). */
async function notificationsText(page: Page): Promise<string> {
  return (await page.locator(".notifications-toasts").allInnerTexts()).join(
    "\n",
  );
}

describe("pause and steer", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("Pause during a command lets it finish and be receipted; Steer and resume goes on with the person's message", async () => {
    const step = stepTimer("pause");
    const responses = writeResponses(
      "pause.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "run_command", argv: WAIT },
      { tool: "edit_file", path: "app.py", old: "value * 1", new: "value * 2" },
      { final: "doubled" },
    );
    const workspace = makeWorkspace("pause-and-steer", {
      "counterfoil.model": `scripted:${responses}`,
      "counterfoil.allowedCommands": [WAIT],
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "wait, then double");
      const panel = runPanel(page);
      await answerCommandQuestion(page, "Accept");
      await panel
        .locator(".step.streaming h3", {
          hasText: "running the approved command…",
        })
        .waitFor({ timeout: 30_000 });
      await panel.locator("#pause").click();
      await panel
        .locator(".run-state", { hasText: "Pausing at the next boundary…" })
        .waitFor({ timeout: 60_000 });
      step("pausing");
      writeFileSync(join(workspace, "go"), ""); // the command may end now
      const offer = panel.locator(".resumable");
      await offer.waitFor({ timeout: 60_000 });
      step("paused");
      assert.match(await offer.innerText(), /Paused run: wait, then double/);
      await waitForNotification(page, /Counterfoil run paused, as asked/);
      assert.deepEqual(
        receiptsOnDisk(workspace).map((receipt) => [
          receipt.tool,
          receipt.exit_state,
        ]),
        [["run_command", "ok"]],
        "the command ran to its end and left its receipt before the pause",
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-paused.png");

      await offer.locator(".reason-input").fill(STEERING);
      await offer.locator("button", { hasText: /^Steer and resume$/ }).click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-2\)/);
      step("resumed with steering");
      assert.ok(
        sessionText(workspace).includes(STEERING),
        "the steering message is in the run's checkpoint",
      );
      await editorTitleAction(page, "Accept").click();
      await panel
        .locator(".verdict", { hasText: "The model's claim: doubled" })
        .waitFor({ timeout: 60_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-steered-ended.png");
      assert.deepEqual(
        receiptsOnDisk(workspace).map((receipt) => [
          receipt.tool,
          receipt.tool_call_id,
        ]),
        [
          ["run_command", "call-1"],
          ["edit_file", "call-2"],
        ],
        "nothing replayed",
      );
    } catch (error) {
      await failureScreenshot(page, "failure-pause.png");
      throw error;
    } finally {
      await page.close();
    }
  });

  test("Pause and Steer with a proposal waiting withdraw it, never reject it: the steering is the person's message, the earlier steps stay, the numbering goes on", async () => {
    const step = stepTimer("pause-waiting");
    const responses = writeResponses(
      "pause-waiting.jsonl",
      { tool: "read_file", path: "app.py" },
      { tool: "edit_file", path: "app.py", old: "value * 1", new: "value * 2" },
      { final: "doubled" },
      { final: "doubled" },
      { final: "doubled" },
    );
    const workspace = makeWorkspace("pause-waiting", {
      "counterfoil.model": `scripted:${responses}`,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "double the value");
      const panel = runPanel(page);
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      await panel.locator("#pause").click();
      const offer = panel.locator(".resumable");
      await offer.waitFor({ timeout: 60_000 });
      await waitForNotification(page, /Counterfoil run paused, as asked/);
      step("paused with a proposal waiting");
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-waiting-paused.png");
      const conversation = panel.locator("#conversation");
      const paused = await conversation.innerText();
      assert.match(
        paused,
        /withdrawn/i,
        "the waiting proposal reads withdrawn",
      );
      assert.doesNotMatch(
        paused.replace(/Nothing was rejected/g, ""),
        /rejected/i,
        "nothing in the panel reads rejected",
      );
      assert.doesNotMatch(
        paused,
        /a command that was running finished/,
        "no command ran",
      );
      assert.doesNotMatch(await notificationsText(page), /rejected/i);
      assert.deepEqual(decisions(workspace), ["call-1 withdrawn"]);
      const receipts = receiptsPane(page);
      const run = receipts
        .locator(".monaco-list-row", { hasText: "double the value" })
        .first();
      await run.waitFor({ timeout: 30_000 });
      assert.doesNotMatch(await receipts.innerText(), /rejected/i);

      await offer.locator(".reason-input").fill(STEERING);
      await offer.locator("button", { hasText: /^Steer and resume$/ }).click();
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      step("resumed with steering");
      // Asked again before the model read the message, and it says so.
      await panel
        .locator(".proposal.state-pending .reason", {
          hasText:
            "proposed before your message: the model has not read it yet",
        })
        .waitFor({ timeout: 30_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-waiting-before-message.png");
      assert.deepEqual(
        steeringRecorded(workspace),
        [STEERING],
        "the steering message is in the run's record as the person's",
      );
      // The composer's Steer, with the proposal asked again and waiting.
      await panel.locator("#steer").click();
      const input = page.locator(".quick-input-widget input");
      await input.waitFor();
      await input.fill(SECOND_STEERING);
      await page.keyboard.press("Enter");
      await panel
        .locator(".person", { hasText: SECOND_STEERING })
        .waitFor({ timeout: 60_000 });
      await waitForProposalDiff(page, /edit_file app\.py \(call-1\)/);
      step("steered with the proposal waiting");
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-waiting-steered.png");
      const steered = await conversation.innerText();
      assert.match(steered, /read_file app\.py/, "the earlier steps stay");
      assert.equal(
        await panel.locator(".person", { hasText: STEERING }).count(),
        1,
        "the first steering message is shown as the person's",
      );
      const numbers = (await panel.locator(".step h3").allInnerTexts()).map(
        (heading) => Number(/^Step (\d+)/.exec(heading)?.[1] ?? NaN),
      );
      assert.deepEqual(
        numbers.filter((number) => !Number.isNaN(number)),
        [1, 2],
        "the numbering goes on: the proposal asked again is still step 2",
      );
      assert.doesNotMatch(
        steered.replace(/Nothing was rejected/g, ""),
        /rejected/i,
      );
      assert.doesNotMatch(await notificationsText(page), /rejected/i);

      await editorTitleAction(page, "Accept").click();
      await panel
        .locator(".verdict", { hasText: "The model's claim: doubled" })
        .waitFor({ timeout: 60_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "pause-waiting-ended.png");
      // Each resume asks the withdrawn call again: pending, the record's latest word then.
      assert.deepEqual(decisions(workspace), [
        "call-1 withdrawn",
        "call-1 pending",
        "call-1 withdrawn",
        "call-1 pending",
        "call-1 approved",
      ]);
    } catch (error) {
      await failureScreenshot(page, "failure-pause-waiting.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

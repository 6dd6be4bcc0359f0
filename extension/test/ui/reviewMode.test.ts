// Review mode in a real VS Code against the real daemon: an approved command runs on a copy of
// the root, its changes come back as one multi-file diff with how it ran, and only Accept applies
// them; the receipt says the command ran in review mode, under which mechanism, and what was
// accepted. Then Revert on that command's receipt: the same multi-file diff, a file changed
// since is named and left alone, Accept puts the others back.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { spawnSync } from "node:child_process";
import {
  answerCommandQuestion,
  clearNotifications,
  clickRevert,
  failureScreenshot,
  makeWorkspace,
  openFolder,
  python,
  receiptLog,
  receiptsOnDisk,
  receiptsPane,
  resizeSideBar,
  runPanel,
  screenshot,
  showCounterfoilView,
  startBrowser,
  startRun,
  waitForDaemon,
  waitForNotification,
  writeResponses,
} from "./workbench";

const TOOL = [
  "import os, pathlib",
  "os.makedirs('gen', exist_ok=True)",
  "pathlib.Path('gen/out.txt').write_text('out\\n')",
  "pathlib.Path('data.txt').write_text('after\\n')",
  "os.remove('old.txt')",
  "",
].join("\n");
const TOOL_ARGV = ["python", "tool.py"];
// Changes two files and prints far more than an observation holds.
const NOISY = [
  "import pathlib",
  "pathlib.Path('data.txt').write_text('after\\n')",
  "pathlib.Path('more.txt').write_text('more\\n')",
  "for n in range(4000):",
  "    print(f'line {n} of the output')",
  "",
].join("\n");
const NOISY_ARGV = ["python", "noisy.py"];

/** A folder holding `files`, whose scripted model asks to run `argv` once in review mode and
 * then answers `final`. */
function reviewWorkspace(
  name: string,
  argv: string[],
  final: string,
  files: Record<string, string>,
): string {
  const script = writeResponses(
    `${name}.jsonl`,
    { tool: "run_command", argv },
    { final },
  );
  const workspace = makeWorkspace(name, {
    "counterfoil.model": `scripted:${script}`,
    "counterfoil.allowedCommands": [argv],
    "counterfoil.commandSandbox": "review",
  });
  for (const [file, text] of Object.entries(files)) {
    writeFileSync(join(workspace, file), text);
  }
  return workspace;
}

let browser: Browser;

describe("review mode", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a reviewed command's changes are one multi-file diff, Accept applies them, the receipt says how it ran", async () => {
    const workspace = reviewWorkspace(
      "review-mode",
      TOOL_ARGV,
      "ran the tool",
      {
        "tool.py": TOOL,
        "data.txt": "before\n",
        "old.txt": "old\n",
      },
    );
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "run the tool");
      await answerCommandQuestion(page, "Accept");
      const question = await waitForNotification(
        page,
        /Apply the changes of python tool\.py/,
      );
      assert.match(question, /exit status 0/);
      assert.match(question, /in a copy of the root \(bubblewrap\)/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "Review python tool.py",
        })
        .waitFor({ timeout: 30_000 });
      // Nothing reaches the root before Accept.
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "before\n",
      );
      assert.ok(existsSync(join(workspace, "old.txt")));
      await page.mouse.move(10, 10);
      await screenshot(page, "review-mode-changes.png");
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /Apply the changes of python tool\.py/,
        })
        .locator(".monaco-button", { hasText: /^Accept$/ })
        .click();
      await waitForNotification(page, /Counterfoil finished/);
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "after\n",
      );
      assert.equal(
        readFileSync(join(workspace, "gen/out.txt"), "utf8"),
        "out\n",
      );
      assert.ok(!existsSync(join(workspace, "old.txt")));
      const command = receiptsOnDisk(workspace).find(
        (receipt) => receipt.tool === "run_command",
      )!;
      assert.deepEqual(command.sandbox, {
        mode: "review",
        mechanism: "bubblewrap",
        network: false,
        unix_sockets: false,
      });
      const review = command.review;
      assert.equal(review?.decision, "accepted");
      assert.deepEqual([...(review?.applied ?? [])].sort(), [
        "data.txt",
        "gen/out.txt",
        "old.txt",
      ]);
      await screenshot(page, "review-mode-accepted.png");

      // Revert the command from its receipt; gen/out.txt, edited since, is left alone.
      writeFileSync(join(workspace, "gen/out.txt"), "edited by hand\n");
      await clearNotifications(page);
      await showCounterfoilView(page);
      await clickRevert(
        page,
        "run_command python",
        "run the tool",
        page.locator(".notifications-toasts .notification-toast", {
          hasText: /Revert call-1/,
        }),
      );
      const asked = await waitForNotification(page, /Revert call-1/);
      assert.match(asked, /gen\/out\.txt \(changed since the command\)/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "Revert call-1",
        })
        .waitFor({ timeout: 30_000 });
      await page.mouse.move(10, 10);
      await screenshot(page, "command-revert-diff.png");
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /Revert call-1/,
        })
        .locator(".monaco-button", { hasText: /^Accept$/ })
        .click();
      await waitForNotification(page, /reverted call-1 in 2 files/);
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "before\n",
      );
      assert.equal(readFileSync(join(workspace, "old.txt"), "utf8"), "old\n");
      assert.equal(
        readFileSync(join(workspace, "gen/out.txt"), "utf8"),
        "edited by hand\n",
      );
      const revert = receiptsOnDisk(workspace).at(-1)!;
      assert.equal(revert.reverts, "call-1");
      await screenshot(page, "command-reverted.png");
    } finally {
      await page.close();
    }
  });

  test("a rejected review looks rejected everywhere; the modal says how the command runs; long output says where it is kept and what the model read", async () => {
    const workspace = reviewWorkspace("review-rejected", NOISY_ARGV, "ran it", {
      "noisy.py": NOISY,
      "data.txt": "before\n",
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "run the noisy tool");
      const modal = await answerCommandQuestion(page, "Accept");
      assert.match(
        modal,
        /Runs in review mode: on a copy of the root \(bubblewrap\), no network; its changes come back for your review/,
        "the modal says how the command will run before it runs",
      );
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: /Apply the changes of python noisy\.py/,
        })
        .locator(".monaco-button", { hasText: /^Reject$/ })
        .click();
      const panel = runPanel(page);
      await panel
        .locator(".verdict", { hasText: "The model's claim: ran it" })
        .waitFor({ timeout: 60_000 });
      assert.equal(
        readFileSync(join(workspace, "data.txt"), "utf8"),
        "before\n",
      );
      assert.ok(!existsSync(join(workspace, "more.txt")));

      // The panel: the step says the changes were rejected and nothing landed.
      const step = panel.locator("#step-0-1");
      await step.locator("summary", { hasText: /^Observation/ }).click();
      const said = await step.innerText();
      assert.match(
        said,
        /Observation \(approved, exit status 0; its changes rejected, nothing landed\)/,
      );
      // Long output: kept with the receipt, and what the model read instead.
      assert.doesNotMatch(said, /were dropped/);
      assert.match(
        said,
        /more characters of output are not shown here; the whole output is kept with the receipt/,
      );
      assert.match(
        await step.locator(".shown-to-model").innerText(),
        /The model was shown the first and last parts of this output, not all of it: artifact-[0-9a-f]{64} \(\d+ bytes, stored\)/,
      );
      await step
        .locator("summary", { hasText: "What the model was shown" })
        .click();
      assert.match(await step.innerText(), /tail_preview/);
      await step.locator("h3").scrollIntoViewIfNeeded();
      await page.mouse.move(10, 10);
      await screenshot(page, "review-rejected-panel.png");

      // The receipts tree: a rejected review does not read "ok" alone.
      await showCounterfoilView(page);
      const row = receiptsPane(page)
        .locator(".monaco-list-row", { hasText: "run_command python" })
        .first();
      await row.waitFor({ timeout: 30_000 });
      assert.match(
        await row.innerText(),
        /its changes rejected, nothing landed/,
      );
      await resizeSideBar(page, 560);
      await page.mouse.move(10, 10);
      await screenshot(page, "review-rejected-receipts.png");
      // Nothing of it landed, so the daemon calls it not revertable: no Revert on its row.
      await row.hover();
      assert.equal(
        await row.locator('.action-label[aria-label^="Revert"]').count(),
        0,
      );
      await screenshot(page, "review-rejected-no-revert.png");

      // `counterfoil receipts show` says so too.
      const shown = spawnSync(
        python,
        ["-m", "counterfoil", "receipts", "show", join(workspace, receiptLog)],
        { encoding: "utf8" },
      );
      assert.equal(shown.status, 0, shown.stderr);
      assert.match(shown.stdout, /review rejected: nothing landed in the root/);
      assert.match(shown.stdout, /changes it made in its review copy 2/);
      assert.match(shown.stdout, /\(to run it; its changes were rejected\)/);
      const command = receiptsOnDisk(workspace).find(
        (receipt) => receipt.tool === "run_command",
      )!;
      assert.equal(command.review?.decision, "rejected");
    } catch (error) {
      await failureScreenshot(page, "failure-review-rejected.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

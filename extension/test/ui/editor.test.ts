// The extension in a real VS Code (code-server, started by scripts/editor-test.sh), driven through
// Debian's Chromium: first the extension-host tests, then the agent flow as a person does it,
// against the real daemon and the scripted model, on copies of the demo project.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  editorUrl,
  extensionDir,
  greeting,
  validation,
  greetingValidation,
  writeSettings,
  changeSettings,
  makeWorkspace,
  startBrowser,
  stepTimer,
  screenshot,
  showCounterfoilView,
  waitForDaemon,
  runCommand,
  startRun,
  editorTitleAction,
  waitForProposalDiff,
  answerCommandQuestion,
  waitForNotification,
  clearNotifications,
  receiptsOnDisk,
  verifyWithCli,
  openFolder,
  pageOptions,
} from "./workbench";

let browser: Browser;

describe("Counterfoil in a real VS Code", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("extension-host tests pass against the real daemon", async () => {
    const workspace = makeWorkspace("host");
    const remote = (path: string) =>
      `vscode-remote://${new URL(editorUrl).host}${path}`;
    const payload = JSON.stringify([
      ["extensionDevelopmentPath", remote(extensionDir)],
      [
        "extensionTestsPath",
        remote(join(extensionDir, "dist/test/host/index.js")),
      ],
    ]);
    const lines: string[] = [];
    let exit!: (code: number) => void;
    const exited = new Promise<number>((done) => {
      exit = done;
    });
    const page = await browser.newPage(pageOptions);
    page.on("console", (message) => {
      const text = message.text();
      if (text.includes("counterfoil-host:")) {
        lines.push(text);
        console.log(text);
      }
    });
    await page.exposeFunction("codeAutomationExit", (code: number) =>
      exit(code),
    );
    await page.goto(
      `${editorUrl}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`,
    );
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<number>((_, fail) => {
        timer = setTimeout(
          () => fail(new Error("extension-host tests did not finish in 150 s")),
          150_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    await screenshot(page, "host-tests.png");
    await page.close();
    assert.equal(code, 0, lines.join("\n"));
    assert.ok(
      lines.some((line) => / \d+ passed, 0 failed/.test(line)),
      lines.join("\n"),
    );
  });

  describe("the agent flow on a copy of the demo project, as a person does it", () => {
    let page: Page;
    let workspace: string;
    let original: string;

    before(async () => {
      const step = stepTimer("window");
      workspace = makeWorkspace("agent-flow");
      original = readFileSync(join(workspace, "app.py"), "utf8");
      page = await openFolder(workspace);
      step("workbench loaded");
      await waitForDaemon(page);
      step("daemon up");
    });

    after(async () => {
      await page?.close();
    });

    test("Reject in the diff's title bar and in the command modal leaves app.py unchanged", async () => {
      const step = stepTimer("reject");
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      step("diff shown");
      await editorTitleAction(page, "Reject").click();
      await page
        .locator(".monaco-diff-editor")
        .first()
        .waitFor({ state: "detached" });
      step("diff closed");
      await answerCommandQuestion(page, "Reject");
      step("command rejected");
      await waitForNotification(
        page,
        /Counterfoil finished \(no files changed.*2 proposals rejected/,
      );
      step("run finished");
      await screenshot(page, "after-reject.png");

      assert.equal(readFileSync(join(workspace, "app.py"), "utf8"), original);
      const okEffects = receiptsOnDisk(workspace).filter(
        (receipt) => receipt.exit_state === "ok",
      );
      assert.deepEqual(
        okEffects,
        [],
        "a rejected effect leaves no successful receipt",
      );
      await clearNotifications(page);
    });

    test("Accept in the diff's title bar writes the fix, the approved validation passes, the log verifies", async () => {
      const step = stepTimer("accept");
      const rejectedReceipts = receiptsOnDisk(workspace).length;
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      step("diff shown");
      await page.mouse.move(10, 10);
      await screenshot(page, "diff-with-accept-reject.png");
      assert.equal(
        readFileSync(join(workspace, "app.py"), "utf8"),
        original,
        "nothing is written before Accept",
      );
      await editorTitleAction(page, "Accept").click();

      const modal = await answerCommandQuestion(page, "Accept");
      assert.ok(modal.includes(`argv: ${JSON.stringify(validation)}`), modal);
      assert.ok(modal.includes(`cwd: ${workspace}`), modal);
      step("command approved");

      await waitForNotification(page, /Counterfoil finished \(changed app\.py/);
      step("run finished");
      const fixed = original.replace("value * 1", "value * 2");
      assert.equal(readFileSync(join(workspace, "app.py"), "utf8"), fixed);
      await page
        .locator(".tabs-container .tab.active", { hasText: "app.py" })
        .waitFor();
      await page
        .locator(".editor-group-container.active .view-lines", {
          hasText: "value * 2",
        })
        .waitFor();
      await screenshot(page, "after-accept.png");
      step("new content shown");

      const receipts = receiptsOnDisk(workspace).slice(rejectedReceipts);
      assert.deepEqual(
        receipts.map((receipt) => [receipt.tool, receipt.exit_state]),
        [
          ["edit_file", "ok"],
          ["run_command", "ok"],
        ],
      );
      assert.deepEqual(receipts[0].changed_artifacts, ["app.py"]);
      assert.deepEqual(receipts[1].arguments, { argv: validation });
      assert.match(String(receipts[1].result), /^status: 0$/m);
      const verified = verifyWithCli(workspace);
      assert.equal(verified.status, 0, verified.output);
      step("receipts verified on disk");

      await clearNotifications(page);
      await showCounterfoilView(page);
      const editReceipt = page.locator(".monaco-list-row", {
        hasText: `${receipts[0].tool_call_id} · edit_file app.py`,
      });
      await editReceipt.waitFor();
      await page
        .locator(".monaco-list-row", {
          hasText: `${receipts[1].tool_call_id} · run_command python -m pytest tests/test_math.py -q`,
        })
        .waitFor();
      await editReceipt.locator(".monaco-tl-twistie").click();
      await page
        .locator(".monaco-list-row", { hasText: "receipt id" })
        .first()
        .waitFor();
      await runCommand(page, "Counterfoil: Verify Receipts");
      await waitForNotification(
        page,
        `The receipt chain is intact (${rejectedReceipts + 2} receipts`,
      );
      await screenshot(page, "receipts-tree.png");
      step("receipts tree checked");
    });

    test("Run Validation from the palette: pick the allowed argv, approve it, see it pass", async () => {
      const step = stepTimer("validation");
      await clearNotifications(page);
      await runCommand(page, "Counterfoil: Run Validation");
      await page
        .locator(".quick-input-list .monaco-list-row", {
          hasText: validation.join(" "),
        })
        .click();
      const modal = await answerCommandQuestion(page, "Accept");
      assert.ok(modal.includes(`argv: ${JSON.stringify(validation)}`), modal);
      const passed = await waitForNotification(page, "Validation passed");
      assert.match(
        passed,
        /python -m pytest tests\/test_math.py -q \(approved, exit status 0\)/,
      );
      await page
        .locator(".panel .view-lines", { hasText: "1 passed" })
        .first()
        .waitFor();
      await screenshot(page, "validation-passed.png");
      step("validation passed");
    });

    test("a proposal whose diff goes to the background is answered from the run panel; a new file diffs against empty", async () => {
      const step = stepTimer("greeting");
      await changeSettings(page, `scripted:${greeting}`, () =>
        writeSettings(workspace, greeting),
      );
      await clearNotifications(page);
      await startRun(page, "greet with Welcome and note why");
      await waitForProposalDiff(page, /edit_file greeting\.py \(call-\d+\)/);
      step("edit diff shown");

      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget input").fill("greeting.py");
      await page
        .locator(".quick-input-list .monaco-list-row.focused", {
          hasText: "greeting.py",
        })
        .waitFor();
      await page.keyboard.press("Enter");
      const pending = page
        .frameLocator("iframe.webview")
        .first()
        .frameLocator("#active-frame")
        .locator(".proposal.state-pending", {
          hasText: "edit_file greeting.py",
        });
      await pending.waitFor({ timeout: 30_000 });
      await screenshot(page, "proposal-in-panel.png");
      await pending.locator("button.accept").click();
      step("edit accepted from the run panel");

      await waitForProposalDiff(
        page,
        /write_file NOTES\.md \(call-\d+\): new file/,
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "diff-new-file.png");
      await editorTitleAction(page, "Accept").click();
      const modal = await answerCommandQuestion(page, "Accept");
      assert.ok(
        modal.includes(`argv: ${JSON.stringify(greetingValidation)}`),
        modal,
      );
      await waitForNotification(
        page,
        /Counterfoil finished \(changed (NOTES\.md, greeting\.py|greeting\.py, NOTES\.md)/,
      );
      step("run finished");

      assert.match(
        readFileSync(join(workspace, "greeting.py"), "utf8"),
        /^GREETING = "Welcome"$/m,
      );
      assert.equal(
        readFileSync(join(workspace, "NOTES.md"), "utf8"),
        "# Notes\n\nThe greeting now says Welcome instead of Hello.\n",
      );
      const last = receiptsOnDisk(workspace).slice(-3);
      assert.deepEqual(
        last.map((receipt) => [receipt.tool, receipt.exit_state]),
        [
          ["edit_file", "ok"],
          ["write_file", "ok"],
          ["run_command", "ok"],
        ],
      );
      const verified = verifyWithCli(workspace);
      assert.equal(verified.status, 0, verified.output);
    });
  });
});

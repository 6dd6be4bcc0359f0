// Approval rules in a real VS Code against the real daemon: the person's rule approves the test
// command (confined, so a rule may) and the person approves the edit. The run panel shows the
// rule's approval as it happens, with Stop beside it, and no question is asked; the verdict
// counts it apart; the receipts tree and the receipts on disk say who decided each effect.
// Always Allow on a command's question approves it and adds its exact rule to the person's
// user settings, after their own, and the Settings editor shows it.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  commandQuestion,
  failureScreenshot,
  makeWorkspace,
  openFolder,
  readSettingsFile,
  receiptsOnDisk,
  receiptsPane,
  runPanel,
  screenshot,
  showCounterfoilView,
  startBrowser,
  stateDir,
  stepTimer,
  validation,
  verifyWithCli,
  waitForDaemon,
  waitForNotification,
} from "./workbench";

const RULE = { decision: "allow", argvPrefix: ["python", "-m", "pytest"] };
const LINE = "approved by rule 1: allow commands starting python -m pytest";
// The test command waits for this file (a handshake), so the panel is read while it runs. It is
// under a cache folder that a command's tree snapshot leaves out.
const GO = join(".pytest_cache", "go");
const WAIT_FOR_GO = [
  "import os, time",
  "deadline = time.monotonic() + 240",
  `while not os.path.exists(${JSON.stringify(GO)}) and time.monotonic() < deadline:`,
  "    time.sleep(0.1)",
  "",
].join("\n");

let browser: Browser;

describe("an effect a rule approves", () => {
  let page: Page | undefined;

  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("is shown as it happens with Stop beside it, asks nothing, and its receipt names the rule while the edit's names the person", async () => {
    const step = stepTimer("rule-approval");
    const workspace = makeWorkspace("rule-approval", {
      "counterfoil.commandSandbox": "confine",
      "counterfoil.approvalRules": [RULE],
    });
    writeFileSync(join(workspace, "tests", "conftest.py"), WAIT_FOR_GO);
    page = await openFolder(workspace);
    await waitForDaemon(page);
    step("daemon ready");
    const panel = runPanel(page);
    await panel.locator("#message").fill("make double() double");
    await panel.locator("#send").click();
    const ruled = panel.locator(".rule-approval", { hasText: LINE });
    try {
      await panel
        .locator(".proposal.state-pending button.accept")
        .click({ timeout: 120_000 });
      step("edit accepted");
      await ruled.waitFor({ timeout: 120_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-rule-approval.png");
      throw error;
    }
    step("rule approval shown");
    await ruled.locator("button", { hasText: "Stop run" }).waitFor();
    assert.equal(await panel.locator("#stop").isEnabled(), true);
    assert.equal(await commandQuestion(page).count(), 0, "nothing asked");
    const badge = panel
      .locator(".proposal", { has: ruled })
      .locator(".badge")
      .first();
    assert.equal(await badge.innerText(), "approved by rule 1");
    await screenshot(page, "rule-approval-running.png");

    mkdirSync(join(workspace, ".pytest_cache"), { recursive: true });
    writeFileSync(join(workspace, GO), "");
    const turn = panel.locator("article.turn").last();
    try {
      await turn.locator(".verdict").waitFor({ timeout: 120_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-rule-approval-verdict.png");
      throw error;
    }
    step("run ended");
    const verdict = await turn.locator(".verdict").innerText();
    assert.match(verdict, /Validation passed/);
    assert.match(verdict, /1 effect approved by your rules, not asked/);
    assert.equal(
      await ruled.locator("button").count(),
      0,
      "no Stop once the run ended",
    );
    await screenshot(page, "rule-approval-verdict.png");

    await showCounterfoilView(page);
    const receipts = receiptsPane(page);
    const command = receipts
      .locator(".monaco-list-row", { hasText: "run_command python -m pytest" })
      .first();
    const edit = receipts
      .locator(".monaco-list-row", { hasText: "edit_file app.py" })
      .first();
    try {
      await command.waitFor({ timeout: 30_000 });
      await edit.waitFor({ timeout: 30_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-rule-approval-tree.png");
      throw error;
    }
    assert.match(
      await command.innerText(),
      /ok · approved by your rule 1, not asked/,
    );
    assert.doesNotMatch(await edit.innerText(), /rule/);
    await screenshot(page, "rule-approval-receipts.png");

    const [edited, ran] = receiptsOnDisk(workspace);
    assert.equal(edited.tool, "edit_file");
    assert.equal(edited.approval?.via, "editor");
    assert.equal(edited.approval?.rule, undefined);
    assert.equal(ran.tool, "run_command");
    assert.equal(ran.approval?.via, "approvalRules");
    assert.equal(ran.approval?.asked, false);
    assert.equal(ran.approval?.rule_index, 1);
    assert.deepEqual(JSON.parse(ran.approval?.rule ?? "null"), RULE);
    const verified = verifyWithCli(workspace);
    assert.equal(verified.status, 0, verified.output);
  });
});

describe("Always Allow on a command's question", () => {
  let page: Page | undefined;

  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("approves the command and appends its exact rule to the person's user settings, never the folder's, shown in the Settings editor", async () => {
    const step = stepTimer("always-allow");
    const own = { decision: "deny", argvPrefix: ["git", "push"] };
    const workspace = makeWorkspace("always-allow", {
      "counterfoil.approvalRules": [own],
    });
    page = await openFolder(workspace);
    await waitForDaemon(page);
    step("daemon ready");
    const panel = runPanel(page);
    await panel.locator("#message").fill("make double() double");
    await panel.locator("#send").click();
    const toast = commandQuestion(page);
    try {
      await panel
        .locator(".proposal.state-pending button.accept")
        .click({ timeout: 120_000 });
      await toast.waitFor({ timeout: 120_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-always-allow.png");
      throw error;
    }
    step("command asked");
    await screenshot(page, "always-allow-asked.png");
    await toast
      .locator(".monaco-button", { hasText: /^Always Allow$/ })
      .click();
    const said = await waitForNotification(
      page,
      "your approval rules (user settings) now allow the command",
    );
    assert.match(said, /from the next run on/);
    // The person's own settings: code-server keeps them in its user file and, for an extension
    // host on its server, in its remote ("Machine") file beside it; VS Code writes the one it
    // reads the value from.
    const user = join(stateDir, "code-server", "user");
    const written = await Promise.all(
      ["User", "Machine"].map(
        async (kind) =>
          (await readSettingsFile(join(user, kind, "settings.json")))[
            "counterfoil.approvalRules"
          ],
      ),
    );
    assert.ok(
      written.some(
        (rules) =>
          JSON.stringify(rules) ===
          JSON.stringify([own, { decision: "allow", argv: validation }]),
      ),
      JSON.stringify(written),
    );
    assert.equal(
      (await readSettingsFile(join(workspace, ".vscode", "settings.json")))[
        "counterfoil.approvalRules"
      ],
      undefined,
      "never the folder's settings",
    );
    await page
      .locator(".notifications-toasts .notification-toast", {
        hasText: "now allow the command",
      })
      .locator(".monaco-button", { hasText: "Show in Settings" })
      .click();
    const setting = page
      .locator(".settings-editor .setting-item", {
        hasText: "Approval Rules",
      })
      .first();
    try {
      await setting.waitFor({ timeout: 30_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-always-allow-settings.png");
      throw error;
    }
    await screenshot(page, "always-allow-settings.png");

    const turn = panel.locator("article.turn").last();
    await turn.locator(".verdict").waitFor({ timeout: 120_000 });
    step("run ended");
    const ran = receiptsOnDisk(workspace).find(
      (receipt) => receipt.tool === "run_command",
    );
    assert.equal(ran?.approval?.via, "editor", "the person approved this one");
  });
});

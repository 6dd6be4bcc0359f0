// The installed .vsix as a new user meets it: its bundled daemon on a Python that has none of
// the project's packages, and the first-run walkthrough.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  editorUrl,
  stateDir,
  python,
  demoProject,
  fixApp,
  validation,
  receiptLog,
  startBrowser,
  stepTimer,
  openPage,
  screenshot,
  waitForDaemon,
  runCommand,
  startRun,
  editorTitleAction,
  waitForProposalDiff,
  answerCommandModal,
  waitForNotification,
  clearNotifications,
  receiptsOnDisk,
} from "./workbench";

let browser: Browser;

/** The texts of every log file VS Code wrote for this output channel, newest sessions included. */
function outputChannelLog(channel: string): string[] {
  const logs = join(stateDir, "code-server", "user", "logs");
  return readdirSync(logs, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(`${channel}.log`))
    .map((path) => readFileSync(join(logs, path), "utf8"));
}

describe("the packaged extension on a fresh Python", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("the .vsix's bundled daemon runs on a Python with none of the project's packages and an approved edit lands", async () => {
    const step = stepTimer("bundled");
    const venv = join(stateDir, "bare-venv");
    execFileSync(python, ["-m", "venv", "--without-pip", venv]);
    const barePython = join(venv, "bin", "python");
    const missing = spawnSync(barePython, ["-c", "import pygls"], {
      env: { PATH: process.env.PATH ?? "" },
    });
    assert.notEqual(missing.status, 0, "the bare venv has no pygls");
    const workspace = join(stateDir, "workspaces", "bundled");
    cpSync(demoProject, workspace, { recursive: true });
    mkdirSync(join(workspace, ".vscode"), { recursive: true });
    writeFileSync(
      join(workspace, ".vscode/settings.json"),
      JSON.stringify({
        "counterfoil.pythonPath": barePython,
        "counterfoil.model": `scripted:${fixApp}`,
        "counterfoil.allowWrites": true,
        "counterfoil.allowedCommands": [validation],
        "counterfoil.receiptLog": receiptLog,
      }),
    );
    const original = readFileSync(join(workspace, "app.py"), "utf8");
    const page = await openPage(
      `${editorUrl}/?folder=${encodeURIComponent(workspace)}`,
    );
    try {
      await waitForDaemon(page);
      step("bundled daemon up");
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      await editorTitleAction(page, "Accept").click();
      await answerCommandModal(page, "Accept");
      await waitForNotification(page, /Counterfoil finished \(changed app\.py/);
      step("run finished");
      assert.equal(
        readFileSync(join(workspace, "app.py"), "utf8"),
        original.replace("value * 1", "value * 2"),
      );
      assert.deepEqual(
        receiptsOnDisk(workspace).map((receipt) => [
          receipt.tool,
          receipt.exit_state,
        ]),
        [
          ["edit_file", "ok"],
          ["run_command", "ok"],
        ],
      );
      await clearNotifications(page);
      await runCommand(page, "Counterfoil: Check Setup");
      try {
        await page
          .locator(".panel .view-lines", { hasText: "no problems found" })
          .first()
          .waitFor({ timeout: 60_000 });
      } catch (error) {
        await screenshot(page, "failure-check-setup.png");
        throw error;
      }
      const report = outputChannelLog("Counterfoil Setup").find((text) =>
        text.includes(barePython),
      );
      assert.ok(report, "Check Setup ran with the bare venv's Python");
      assert.match(
        report,
        /^ok {2}counterfoil: .*\/bundled\/libs\/counterfoil$/m,
      );
      assert.match(report, /^ok {2}pygls: 2\./m);
      assert.match(report, /^ok {2}mlx backend: MLX is not installed/m);
      await screenshot(page, "check-setup-bundled.png");
      step("check setup shows the bundled daemon");
    } finally {
      await page.close();
    }
  });

  test("the walkthrough shows its four steps", async () => {
    const workspace = join(stateDir, "workspaces", "walkthrough");
    cpSync(demoProject, workspace, { recursive: true });
    const page = await openPage(
      `${editorUrl}/?folder=${encodeURIComponent(workspace)}`,
    );
    try {
      await runCommand(page, "Welcome: Open Walkthrough...");
      const input = page.locator(".quick-input-widget input");
      await input.fill("Get started with Counterfoil");
      await page
        .locator(".quick-input-list .monaco-list-row.focused", {
          hasText: "Get started with Counterfoil",
        })
        .waitFor();
      await page.keyboard.press("Enter");
      for (const title of [
        "Pick or confirm the Python interpreter",
        "Choose a model",
        "Allow writes and one validation command here",
        "Run the demo goal on a copy of the demo project",
      ]) {
        await page
          .locator(".gettingStartedContainer", { hasText: title })
          .first()
          .waitFor({ timeout: 30_000 });
      }
      await page.mouse.move(10, 10);
      await screenshot(page, "walkthrough.png");
    } finally {
      await page.close();
    }
  });
});

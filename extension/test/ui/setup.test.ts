// The installed .vsix as a new user meets it: its bundled daemon on a Python that has none of
// the project's packages, and the first-run walkthrough.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { shellLine } from "../../src/model/modelPrep";
import {
  answerCommandQuestion,
  assertFixAppLanded,
  bareVenv,
  clearNotifications,
  demoProject,
  demoWorkspace,
  editorTitleAction,
  failureScreenshot,
  fixApp,
  openFolder,
  outputChannelLog,
  receiptLog,
  runCommand,
  screenshot,
  startBrowser,
  startRun,
  stateDir,
  stepTimer,
  validation,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
} from "./workbench";

let browser: Browser;

/** The bundled daemon's libraries in the installed .vsix. */
function installedBundledLibs(): string {
  const extensions = join(stateDir, "code-server", "ext");
  const installed = readdirSync(extensions).find((name) =>
    name.startsWith("counterfoil.counterfoil-"),
  );
  assert.ok(installed, `the .vsix is installed in ${extensions}`);
  return join(extensions, installed, "bundled", "libs");
}

/** What the bundled daemon on `barePython` reports `model` needs (counterfoil/modelRuntime). */
function runtimeReport(
  barePython: string,
  model: string,
): { missing: string[]; command: string[] } {
  const report = execFileSync(
    barePython,
    [
      "-c",
      "import json, sys; from counterfoil.models.runtime import runtime_report; print(json.dumps(runtime_report(sys.argv[1])))",
      model,
    ],
    {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", PYTHONPATH: installedBundledLibs() },
    },
  );
  return JSON.parse(report) as { missing: string[]; command: string[] };
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
    const barePython = bareVenv();
    const missing = spawnSync(barePython, ["-c", "import pygls"], {
      env: { PATH: process.env.PATH ?? "" },
    });
    assert.notEqual(missing.status, 0, "the bare venv has no pygls");
    const workspace = demoWorkspace("bundled", {
      "counterfoil.pythonPath": barePython,
      "counterfoil.model": `scripted:${fixApp}`,
      "counterfoil.allowWrites": true,
      "counterfoil.allowedCommands": [validation],
      "counterfoil.receiptLog": receiptLog,
    });
    const original = readFileSync(join(workspace, "app.py"), "utf8");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("bundled daemon up");
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      await editorTitleAction(page, "Accept").click();
      await answerCommandQuestion(page, "Accept");
      await waitForNotification(page, /Counterfoil finished \(changed app\.py/);
      step("run finished");
      assertFixAppLanded(workspace, original);
      await clearNotifications(page);
      await runCommand(page, "Counterfoil: Check Setup");
      try {
        await page
          .locator(".panel .view-lines", { hasText: "no problems found" })
          .first()
          .waitFor({ timeout: 60_000 });
      } catch (error) {
        await failureScreenshot(page, "failure-check-setup.png");
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

  test("an MLX model on a Python without the model runtime is offered its install in a terminal, and no run starts", async () => {
    const step = stepTimer("runtime offer");
    const barePython = bareVenv();
    // A model folder on disk, so the model can be had and only the runtime is missing (a hub
    // model is not cached here, and the offer then says that instead of offering an install).
    const model = mkdtempSync(join(tmpdir(), "counterfoil-mlx-model-"));
    const workspace = demoWorkspace("runtime-offer", {
      "counterfoil.pythonPath": barePython,
      "counterfoil.model": model,
      "counterfoil.allowWrites": true,
      "counterfoil.allowedCommands": [validation],
      // The DOM renderer, so the terminal's text can be read from the page.
      "terminal.integrated.gpuAcceleration": "off",
    });
    const report = runtimeReport(barePython, model);
    assert.deepEqual(report.missing, ["mlx.core", "mlx_lm", "llguidance"]);
    // The bundle has no installed metadata: the extra's requirements are named one by one.
    assert.deepEqual(report.command.slice(0, 5), [
      barePython,
      "-m",
      "pip",
      "install",
      "mlx-lm==0.32.2",
    ]);
    const line = shellLine(report.command);
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("bundled daemon up");
      await startRun(page, "make tests/test_math.py pass");
      const dialog = page.locator(".monaco-dialog-box");
      await dialog.waitFor({ timeout: 30_000 });
      const offer = await dialog.innerText();
      await screenshot(page, "runtime-offer.png");
      step("offer shown");
      assert.ok(
        offer.includes(
          `Counterfoil: ${model} needs mlx.core, mlx_lm, llguidance, which ${barePython} cannot import.`,
        ),
        offer,
      );
      assert.ok(
        offer.includes("This runs, in a terminal you can watch:") &&
          offer.includes(line),
        `the offer shows the exact command: ${offer}`,
      );
      await dialog
        .locator(".dialog-buttons .monaco-button", {
          hasText: `Install the model runtime into ${barePython}`,
        })
        .click();
      await dialog.waitFor({ state: "detached" });
      await waitForNotification(
        page,
        "Counterfoil: installing the model runtime in the terminal; start the run again when it has finished.",
      );
      // The bare venv has no pip, so the command ends at once, offline: it ran in that Python.
      const rows = page.locator(".terminal-wrapper.active .xterm-rows");
      const squash = (text: string) => text.replace(/\s+/g, "");
      let typed = "";
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        typed = (await rows.count()) > 0 ? await rows.first().innerText() : "";
        if (
          squash(typed).includes(squash(line)) &&
          typed.includes("No module named pip")
        ) {
          break;
        }
        await page.waitForTimeout(250);
      }
      await screenshot(page, "runtime-offer-terminal.png");
      step("terminal ran the command");
      assert.ok(
        squash(typed).includes(squash(line)),
        `the terminal shows the command: ${typed}`,
      );
      assert.match(typed, /No module named pip/);
      assert.equal(
        await page
          .locator(".notifications-toasts .notification-toast", {
            hasText:
              /Counterfoil (finished|run failed|run stopped|: downloading)/,
          })
          .count(),
        0,
        "no run and no download started",
      );
      assert.equal(
        await page
          .locator(".statusbar-item", {
            hasText: /Counterfoil: (loading|downloading)/,
          })
          .count(),
        0,
      );
    } finally {
      await page.close();
    }
  });

  test("the walkthrough shows its four steps", async () => {
    const workspace = join(stateDir, "workspaces", "walkthrough");
    cpSync(demoProject, workspace, { recursive: true });
    const page = await openFolder(workspace);
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

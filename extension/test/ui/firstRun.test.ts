// The first run as a new user lives it on an offline machine: a bare Python and the default
// model, which is neither cached nor downloadable. Run says both at once (no install offered for
// a model that could not run after it), the goal typed stays where it was typed, Check Setup
// names the model as a problem, and Choose a Model → Scripted demo sets this folder only. With
// HF_HUB_OFFLINE set (as the whole suite runs) the reason given is that downloads are off.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  bareVenv,
  clearNotifications,
  daemonConfigDir,
  demoWorkspace,
  failureScreenshot,
  makeWorkspace,
  openFolder,
  python,
  readSettingsFile,
  runCommand,
  runPanel,
  screenshot,
  settingsNow,
  startBrowser,
  startRun,
  stateDir,
  stepTimer,
  until,
  waitForDaemon,
  waitForNotification,
} from "./workbench";

const GOAL = "make tests/test_math.py pass";

let browser: Browser;

/** Whether the model hub answers from here (then the default model could be downloaded). */
async function hubReachable(): Promise<boolean> {
  try {
    await fetch("https://huggingface.co", {
      signal: AbortSignal.timeout(5000),
    });
    return true;
  } catch {
    return false;
  }
}

async function chooseScriptedDemo(page: Page): Promise<void> {
  // The palette is opened from the keyboard: runCommand's click to focus the workbench can land
  // on the Welcome page's "open a folder" link, whose dialog then replaces the quick pick.
  await page.keyboard.press("Escape");
  try {
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor();
    await input.fill(">Counterfoil: Choose a Model");
    await page
      .locator(".quick-input-list .monaco-list-row.focused", {
        hasText: "Counterfoil: Choose a Model",
      })
      .waitFor();
    await page.keyboard.press("Enter");
    await page
      .locator(".quick-input-list .monaco-list-row", {
        hasText: "Scripted demo",
      })
      .first()
      .click();
  } catch (error) {
    await failureScreenshot(page, "failure-first-run-choose-model.png");
    throw error;
  }
}

describe("the first run on an offline machine", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a default model that cannot be had is said with the runtime question, the goal stays, Check Setup names it, and the demo model is set for this folder only", async (context) => {
    if (await hubReachable()) {
      context.skip(
        "the model hub is reachable: the default model could be downloaded",
      );
      return;
    }
    const step = stepTimer("first run");
    const barePython = bareVenv();
    // No model setting: the default model, as a new user has it.
    const workspace = demoWorkspace("first-run", {
      "counterfoil.pythonPath": barePython,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await startRun(page, GOAL);
      const said = await waitForNotification(
        page,
        /Counterfoil run not started: .* needs .*mlx/,
      );
      await screenshot(page, "first-run-model-cannot-be-had.png");
      step("told at once");
      assert.match(
        said,
        /needs mlx\.core, mlx_lm, llguidance and its files, and the files cannot be had: .*(neither in the hub cache nor downloadable|not cached, and HF_HUB_OFFLINE is set)/,
      );
      assert.equal(
        await page.locator(".monaco-dialog-box").count(),
        0,
        "no install is offered for a model that could not run after it",
      );

      // Run Agent… offers again the goal that did not start.
      await clearNotifications(page);
      await runCommand(page, "Counterfoil: Run Agent…");
      const input = page.locator(".quick-input-widget input");
      await page
        .locator(".quick-input-widget", {
          hasText: "What should the agent do?",
        })
        .waitFor();
      assert.equal(await input.inputValue(), GOAL);
      await page.keyboard.press("Escape");
      step("goal kept");

      await runCommand(page, "Counterfoil: Check Setup");
      const report = page.locator(".panel .view-lines", {
        // The editor draws spaces as no-break spaces: \s matches both.
        hasText: /problems:\s.*model/,
      });
      try {
        await report.first().waitFor({ timeout: 60_000 });
      } catch (error) {
        await failureScreenshot(page, "failure-first-run-check-setup.png");
        throw error;
      }
      const text = await report.first().innerText();
      assert.match(
        text,
        /BAD\smodel:\s.*(neither\sin\sthe\shub\scache\snor\sdownloadable|not\scached,\sand\sHF_HUB_OFFLINE\sis\sset)/,
      );
      assert.doesNotMatch(text, /no\sproblems\sfound/);
      await screenshot(page, "first-run-check-setup.png");
      step("check setup names the model");

      await chooseScriptedDemo(page);
      const folderSettings = join(workspace, ".vscode", "settings.json");
      await until(
        () =>
          String(
            settingsNow(folderSettings)?.["counterfoil.model"] ?? "",
          ).startsWith("scripted:"),
        "Scripted demo is set in the folder's settings",
      );
      const chosen = String(
        (await readSettingsFile(folderSettings))["counterfoil.model"],
      );
      assert.match(chosen, /^scripted:.*fix-app\.jsonl$/);
      assert.doesNotMatch(
        chosen,
        /counterfoil\.counterfoil-\d/,
        "the script is not named in the extension's versioned folder: it survives an update",
      );
      const userSettings = join(
        stateDir,
        "code-server",
        "user",
        "User",
        "settings.json",
      );
      assert.equal(
        (await readSettingsFile(userSettings))["counterfoil.model"],
        undefined,
        "the user's settings have no model: the demo's script is not replayed in other projects",
      );
      await screenshot(page, "first-run-scripted-demo.png");
      step("scripted demo for this folder");
    } finally {
      await page.close();
    }
  });

  test("a goal typed in the run panel stays there when the run cannot start", async (context) => {
    if (await hubReachable()) {
      context.skip(
        "the model hub is reachable: the default model could be downloaded",
      );
      return;
    }
    const workspace = demoWorkspace("first-run-panel", {
      "counterfoil.pythonPath": bareVenv(),
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      const panel = runPanel(page);
      const message = panel.locator("#message");
      try {
        await message.fill(GOAL);
      } catch (error) {
        await failureScreenshot(page, "failure-first-run-panel.png");
        const frames = page.frames().map((frame) => frame.url());
        throw new Error(`${String(error)}; frames: ${frames.join(" | ")}`);
      }
      await panel.locator("#send").click();
      await waitForNotification(page, /Counterfoil run not started/);
      await screenshot(page, "first-run-panel-goal-kept.png");
      assert.equal(await message.inputValue(), GOAL, "the goal typed stays");
      assert.equal(await panel.locator("#send").innerText(), "Run");
    } finally {
      await page.close();
    }
  });

  test("Open a Copy of the Demo Project puts the copy where the person chooses, records its settings as Counterfoil's own, and opens it in a new window", async () => {
    const step = stepTimer("demo-copy");
    const page = await openFolder(makeWorkspace("demo-opener"));
    const home = join(stateDir, "demo-home");
    mkdirSync(home, { recursive: true });
    const copy = join(home, "counterfoil-demo");
    try {
      await waitForDaemon(page);
      const opened = page.context().waitForEvent("page", { timeout: 60_000 });
      await runCommand(page, "Counterfoil: Open a Copy of the Demo Project");
      // VS Code's own folder dialog (in a browser, a quick input that takes a typed path).
      const input = page.locator(".quick-input-widget input");
      await page
        .locator(".quick-input-widget", { hasText: "Put the Demo Here" })
        .waitFor();
      await screenshot(page, "demo-copy-dialog.png");
      await input.fill(`${home}/`);
      // The dialog lists a typed folder a moment later; its button pressed before then
      // accepts the folder still listed (or opens it) instead. The chosen folder is empty:
      // listed, it shows only "..".
      const rows = page.locator(".quick-input-list .monaco-list-row");
      await page.waitForFunction(
        () => {
          const listed = document.querySelectorAll(
            ".quick-input-list .monaco-list-row",
          );
          return listed.length === 1 && listed[0].textContent?.trim() === "..";
        },
        undefined,
        { timeout: 30_000 },
      );
      assert.equal(await rows.count(), 1);
      await page
        .locator(".quick-input-widget .monaco-button", {
          hasText: "Put the Demo Here",
        })
        .click();
      const window = await opened;
      step("new window opened");
      await window.waitForLoadState();
      assert.ok(
        decodeURIComponent(window.url()).includes(copy),
        `the new window opens the copy: ${window.url()}`,
      );
      assert.ok(existsSync(join(copy, "app.py")), "the copy is where chosen");
      assert.ok(
        !page.isClosed(),
        "the window the person was in stays as it was",
      );
      // The copy's settings, read as its own daemon will read them: Counterfoil's own values.
      const outcomes = execFileSync(
        python,
        [
          "-c",
          "import json, sys, pathlib\n" +
            "from counterfoil.settings.folder_grants import FolderGrants\n" +
            "from counterfoil.settings.layers import layered_settings\n" +
            "root = pathlib.Path(sys.argv[1])\n" +
            "written = json.loads((root / '.vscode/settings.json').read_text())\n" +
            "folder = {k.removeprefix('counterfoil.'): v for k, v in written.items()}\n" +
            "layered = layered_settings({'layers': {'user': {}, 'workspace': folder, 'folder': {}}}, root, FolderGrants(pathlib.Path(sys.argv[2])))\n" +
            "print(json.dumps(sorted((v.key, v.outcome) for v in layered.folder_values)))\n",
          copy,
          daemonConfigDir,
        ],
        { encoding: "utf8" },
      );
      assert.deepEqual(JSON.parse(outcomes), [
        ["allowWrites", "granted"],
        ["allowedCommands", "granted"],
        ["model", "granted"],
      ]);
      await window.close();
    } catch (error) {
      await failureScreenshot(page, "failure-demo-copy.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

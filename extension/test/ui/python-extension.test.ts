// The interpreter the person chose in the Python extension runs the daemon, and choosing another
// restarts it there. The real Python extension (ms-python.python) cannot be installed here (no
// marketplace offline), so the window loads a test double of it with the same id
// (test/fixtures/python-extension-double: only the environments API Counterfoil calls) as a
// development extension, beside the installed .vsix. Both interpreters are venvs with none of the
// project's packages: the .vsix's bundled daemon runs on either.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  demoWorkspace,
  editorUrl,
  extensionDir,
  failureScreenshot,
  fixApp,
  openPage,
  python,
  runCommand,
  screenshot,
  startBrowser,
  stateDir,
  stepTimer,
  waitForDaemon,
} from "./workbench";

const PYTHON_EXTENSION_DOUBLE = join(
  extensionDir,
  "test/fixtures/python-extension-double",
);
const SOURCE = "the Python extension's active interpreter";

let browser: Browser;

function venv(name: string): string {
  const folder = join(stateDir, name);
  const interpreter = join(folder, "bin", "python");
  if (!existsSync(interpreter)) {
    execFileSync(python, ["-m", "venv", "--without-pip", folder]);
  }
  return interpreter;
}

/** Every Counterfoil trace VS Code has written so far, all windows together. */
function traces(): string {
  const logs = join(stateDir, "code-server", "user", "logs");
  return readdirSync(logs, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith("Counterfoil.log"))
    .map((path) => readFileSync(join(logs, path), "utf8"))
    .join("\n");
}

async function waitForTrace(page: Page, text: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!traces().includes(text)) {
    if (Date.now() > deadline) {
      await failureScreenshot(page, "failure-python-extension-trace.png");
      assert.fail(`the trace never said: ${text}`);
    }
    await page.waitForTimeout(250);
  }
}

/** The interpreters of the daemons running now (`INTERPRETER -m counterfoil serve`). */
function runningDaemons(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // it ended while we looked
    }
    if (argv.slice(1, 4).join(" ") === "-m counterfoil serve") {
      found.push(argv[0]);
    }
  }
  return found;
}

async function waitForDaemonOn(page: Page, interpreter: string): Promise<void> {
  await waitForTrace(
    page,
    `starting the daemon with ${interpreter} (${SOURCE})`,
  );
  const deadline = Date.now() + 30_000;
  while (!runningDaemons().includes(interpreter)) {
    if (Date.now() > deadline) {
      assert.fail(`no daemon runs on ${interpreter}: ${runningDaemons()}`);
    }
    await page.waitForTimeout(250);
  }
}

describe("the interpreter chosen in the Python extension (a test double of it)", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("the daemon runs on the double's active interpreter and restarts on the one selected next", async () => {
    const step = stepTimer("python extension");
    const first = venv("python-double-first");
    const second = venv("python-double-second");
    const workspace = demoWorkspace("python-extension", {
      "pythonTestDouble.activeInterpreter": first,
      "counterfoil.model": `scripted:${fixApp}`,
    });
    const payload = JSON.stringify([
      [
        "extensionDevelopmentPath",
        `vscode-remote://${new URL(editorUrl).host}${PYTHON_EXTENSION_DOUBLE}`,
      ],
    ]);
    const page = await openPage(
      `${editorUrl}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`,
    );
    try {
      await waitForDaemon(page);
      await waitForDaemonOn(page, first);
      step("daemon on the first interpreter");

      await runCommand(page, "Python: Select Interpreter");
      const input = page.locator(".quick-input-widget input");
      await page
        .locator(".quick-input-widget", { hasText: "Select Interpreter" })
        .waitFor();
      await input.fill(second);
      await page.keyboard.press("Enter");
      await waitForDaemonOn(page, second);
      await page
        .locator(".statusbar-item", { hasText: "Counterfoil: unloaded" })
        .first()
        .waitFor({ timeout: 30_000 });
      step("daemon restarted on the second interpreter");
      const deadline = Date.now() + 10_000;
      while (runningDaemons().includes(first) && Date.now() < deadline) {
        await page.waitForTimeout(250);
      }
      assert.ok(
        !runningDaemons().includes(first),
        "the daemon on the first interpreter stopped",
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "python-extension-interpreter.png");
    } finally {
      await page.close();
    }
  });
});

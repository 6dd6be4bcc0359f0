// The extension in a real VS Code (code-server, started by scripts/editor-test.sh), driven through
// Debian's Chromium: first the extension-host tests, then the agent flow as a person does it,
// against the real daemon and the scripted model, on copies of the demo project.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Browser, type Page, chromium } from "playwright-core";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set; run scripts/editor-test.sh`);
  }
  return value;
}

const editorUrl = required("COUNTERFOIL_EDITOR_URL");
const stateDir = required("COUNTERFOIL_EDITOR_STATE");
const repoRoot = resolve(
  process.env.COUNTERFOIL_REPO ?? join(__dirname, "../../../.."),
);
const artifacts = resolve(
  process.env.COUNTERFOIL_ARTIFACTS ?? join(repoRoot, "test-artifacts/editor"),
);
const python = process.env.COUNTERFOIL_PYTHON ?? "python3";
const extensionDir = join(repoRoot, "extension");
const demoProject = join(repoRoot, "fixtures/demo-project");
const fixApp = join(repoRoot, "fixtures/responses/fix-app.jsonl");
const greeting = join(repoRoot, "fixtures/responses/greeting.jsonl");
const validation = ["python", "-m", "pytest", "tests/test_math.py", "-q"];
const greetingValidation = ["python", "validate.py"];
const receiptLog = ".counterfoil/receipts.jsonl";

/** Workspace settings for the daemon, with the scripted model replaying `responses`. */
function writeSettings(folder: string, responses: string): void {
  mkdirSync(join(folder, ".vscode"), { recursive: true });
  const settings = {
    "counterfoil.serverCommand": [python, "-m", "counterfoil", "serve"],
    "counterfoil.model": `scripted:${responses}`,
    "counterfoil.allowWrites": true,
    "counterfoil.allowedCommands": [validation, greetingValidation],
    "counterfoil.receiptLog": receiptLog,
    "counterfoil.confirmTimeoutSeconds": 120,
  };
  writeFileSync(
    join(folder, ".vscode/settings.json"),
    JSON.stringify(settings, null, 2),
  );
}

/** A fresh copy of the demo project, set up for the fix-app script. */
function makeWorkspace(name: string): string {
  const folder = join(stateDir, "workspaces", name);
  cpSync(demoProject, folder, { recursive: true });
  writeSettings(folder, fixApp);
  return folder;
}

let browser: Browser;

/** Logs how long each step of a UI test took, so a slow step shows in the output. */
function stepTimer(testName: string): (step: string) => void {
  let last = Date.now();
  return (step) => {
    const now = Date.now();
    console.log(`[${testName}] ${step}: ${now - last} ms`);
    last = now;
  };
}

async function openPage(
  url: string,
  onConsole?: (text: string) => void,
): Promise<Page> {
  const page = await browser.newPage({
    viewport: { width: 1440, height: 900 },
  });
  page.on("console", (message) => onConsole?.(message.text()));
  page.on("pageerror", (error) => console.log(`[page error] ${error.message}`));
  await page.goto(url);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  return page;
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(300); // let notifications finish fading in
  await page.screenshot({ path: join(artifacts, name) });
}

/** Opens the Counterfoil view (which activates the extension) and waits for the daemon. */
async function waitForDaemon(page: Page): Promise<void> {
  await page
    .locator('.activitybar .action-item a[aria-label^="Counterfoil"]')
    .click();
  await page
    .locator(".statusbar-item", { hasText: /Counterfoil: (?!stopped)/ })
    .first()
    .waitFor({ timeout: 60_000 });
}

async function runCommand(page: Page, title: string): Promise<void> {
  await page
    .locator(".monaco-workbench")
    .click({ position: { x: 700, y: 400 } });
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor();
  await input.fill(`>${title}`);
  await page
    .locator(".quick-input-list .monaco-list-row.focused", { hasText: title })
    .waitFor();
  await page.keyboard.press("Enter");
}

async function startRun(page: Page, goal: string): Promise<void> {
  await runCommand(page, "Counterfoil: Run Agent…");
  const input = page.locator(".quick-input-widget input");
  await page
    .locator(".quick-input-widget", { hasText: "What should the agent do?" })
    .waitFor();
  await input.fill(goal);
  await page.keyboard.press("Enter");
}

/** The active editor group's title-bar action with this label (not the notification button). */
function editorTitleAction(page: Page, label: string) {
  return page.locator(
    `.editor-group-container.active .editor-actions a.action-label[aria-label^="${label}"]`,
  );
}

async function waitForProposalDiff(
  page: Page,
  title: string | RegExp = "edit_file app.py (call-1)",
): Promise<void> {
  try {
    await page
      .locator(".tabs-container .tab.active", { hasText: title })
      .waitFor({ timeout: 30_000 });
    await page
      .locator(".editor-group-container.active .monaco-diff-editor")
      .waitFor();
  } catch (error) {
    await screenshot(page, "failure-no-proposal-diff.png");
    throw error;
  }
  await editorTitleAction(page, "Accept").waitFor();
  await editorTitleAction(page, "Reject").waitFor();
}

async function answerCommandModal(
  page: Page,
  answer: "Accept" | "Reject",
): Promise<string> {
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: 30_000 });
  const text = await dialog.innerText();
  await screenshot(page, `command-modal-${answer.toLowerCase()}.png`);
  await dialog
    .locator(".dialog-buttons .monaco-button", {
      hasText: new RegExp(`^${answer}$`),
    })
    .click();
  await dialog.waitFor({ state: "detached" });
  return text;
}

async function waitForNotification(
  page: Page,
  text: string | RegExp,
): Promise<string> {
  const toast = page
    .locator(".notifications-toasts .notification-toast", { hasText: text })
    .first();
  await toast.waitFor({ timeout: 30_000 });
  return toast.innerText();
}

async function clearNotifications(page: Page): Promise<void> {
  await runCommand(page, "Notifications: Clear All Notifications");
}

function receiptsOnDisk(workspace: string): Array<Record<string, unknown>> {
  if (!existsSync(join(workspace, receiptLog))) {
    return [];
  }
  return readFileSync(join(workspace, receiptLog), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function verifyWithCli(workspace: string): {
  status: number | null;
  output: string;
} {
  const verified = spawnSync(
    python,
    ["-m", "counterfoil", "receipts", "verify", join(workspace, receiptLog)],
    {
      encoding: "utf8",
    },
  );
  return {
    status: verified.status,
    output: `${verified.stdout}${verified.stderr}`,
  };
}

describe("Counterfoil in a real VS Code", () => {
  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
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
    const page = await browser.newPage({
      viewport: { width: 1440, height: 900 },
    });
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
      page = await openPage(
        `${editorUrl}/?folder=${encodeURIComponent(workspace)}`,
      );
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
      await answerCommandModal(page, "Reject");
      step("command rejected");
      await waitForNotification(
        page,
        "Counterfoil finished (no files changed; 2 proposals rejected)",
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

      const modal = await answerCommandModal(page, "Accept");
      assert.ok(modal.includes(`argv: ${JSON.stringify(validation)}`), modal);
      assert.ok(modal.includes(`cwd: ${workspace}`), modal);
      step("command approved");

      await waitForNotification(page, "Counterfoil finished (changed app.py)");
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
      await page
        .locator('.activitybar .action-item a[aria-label^="Counterfoil"]')
        .click();
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
        `the receipt log verifies (${rejectedReceipts + 2} receipts)`,
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
      const modal = await answerCommandModal(page, "Accept");
      assert.ok(modal.includes(`argv: ${JSON.stringify(validation)}`), modal);
      const passed = await waitForNotification(page, "Validation passed");
      assert.match(passed, /python -m pytest tests\/test_math.py -q \(ok\)/);
      await page
        .locator(".panel .view-lines", { hasText: "1 passed" })
        .first()
        .waitFor();
      await screenshot(page, "validation-passed.png");
      step("validation passed");
    });

    test("a proposal whose diff goes to the background is answered from a notification; a new file diffs against empty", async () => {
      const step = stepTimer("greeting");
      writeSettings(workspace, greeting);
      await page.waitForTimeout(1500); // VS Code picks up the changed settings file
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
      const toast = page.locator(".notifications-toasts .notification-toast", {
        hasText: "its diff is not in front",
      });
      await toast.waitFor();
      await screenshot(page, "proposal-in-notification.png");
      await toast.locator(".monaco-button", { hasText: /^Accept$/ }).click();
      step("edit accepted from the notification");

      await waitForProposalDiff(
        page,
        /write_file NOTES\.md \(call-\d+\): new file/,
      );
      await page.mouse.move(10, 10);
      await screenshot(page, "diff-new-file.png");
      await editorTitleAction(page, "Accept").click();
      const modal = await answerCommandModal(page, "Accept");
      assert.ok(
        modal.includes(`argv: ${JSON.stringify(greetingValidation)}`),
        modal,
      );
      await waitForNotification(
        page,
        "Counterfoil finished (changed NOTES.md, greeting.py)",
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
      await waitForNotification(page, "Counterfoil finished (changed app.py)");
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
      await page
        .locator(".panel .view-lines", { hasText: "bundled/libs/counterfoil" })
        .first()
        .waitFor({ timeout: 60_000 });
      await page
        .locator(".panel .view-lines", { hasText: `python: ` })
        .first()
        .waitFor();
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

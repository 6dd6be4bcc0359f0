// What the UI tests share: the environment scripts/editor-test.sh sets, the demo project and
// its scripted responses, one Chromium, and the steps a person takes in the workbench.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import {
  type Browser,
  type FrameLocator,
  type Locator,
  type Page,
  chromium,
} from "playwright-core";
import type { LoggedReceipt } from "../../src/daemon/protocol";
import { NO_RECEIPT_TO_REVERT } from "../../src/receipts/receiptNodes";

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set; run scripts/editor-test.sh`);
  }
  return value;
}

export const editorUrl = required("COUNTERFOIL_EDITOR_URL");
export const stateDir = required("COUNTERFOIL_EDITOR_STATE");
export const repoRoot = resolve(
  process.env.COUNTERFOIL_REPO ?? join(__dirname, "../../../.."),
);
export const artifacts = resolve(
  process.env.COUNTERFOIL_ARTIFACTS ?? join(repoRoot, "test-artifacts/editor"),
);
export const python = process.env.COUNTERFOIL_PYTHON ?? "python3";
export const extensionDir = join(repoRoot, "extension");
export const demoProject = join(repoRoot, "fixtures/demo-project");
export const fixApp = join(repoRoot, "fixtures/responses/fix-app.jsonl");
export const greeting = join(repoRoot, "fixtures/responses/greeting.jsonl");
export const validation = [
  "python",
  "-m",
  "pytest",
  "tests/test_math.py",
  "-q",
];
export const greetingValidation = ["python", "validate.py"];
export const receiptLog = ".counterfoil/receipts.jsonl";

/** A scripted model's responses, one JSON line each, in the suite's state folder; its path. */
export function writeResponses(name: string, ...responses: object[]): string {
  const file = join(stateDir, name);
  writeFileSync(
    file,
    responses.map((response) => `${JSON.stringify(response)}\n`).join(""),
  );
  return file;
}

/**
 * A model directory whose greedy answers are `answers`, one per step: real weights set by hand
 * (server/counterfoil/testing/scripted_weights.py), so MLX loads, prefills and streams it like
 * any model, in the daemon or behind mlx_lm.server.
 */
export function scriptedWeightsModel(name: string, answers: string[]): string {
  const script = join(stateDir, `${name}-answers.jsonl`);
  writeFileSync(script, answers.join("\n") + "\n");
  const built = spawnSync(
    python,
    [
      "-m",
      "counterfoil.testing.scripted_weights",
      join(stateDir, `${name}-scripted-weights-model`),
      script,
    ],
    { encoding: "utf8" },
  );
  assert.equal(built.status, 0, built.stderr);
  return built.stdout.trim();
}

/**
 * A settings file as it stands, or undefined while it does not parse. VS Code rewrites a
 * settings file in place (truncate, then write), so a read can catch it empty or half-written;
 * a missing file reads as no settings.
 */
export function settingsNow(path: string): Record<string, unknown> | undefined {
  if (!existsSync(path)) {
    return {};
  }
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** A settings file once it parses: waits out VS Code's write in progress (at most 5 s). */
export async function readSettingsFile(
  path: string,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const settings = settingsNow(path);
    if (settings !== undefined) {
      return settings;
    }
    assert.ok(Date.now() < deadline, `${path} does not parse`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The daemon's settings for the demo project, with the scripted model replaying `responses`. */
export function daemonSettings(responses: string): Record<string, unknown> {
  return {
    "counterfoil.serverCommand": [python, "-m", "counterfoil", "serve"],
    "counterfoil.model": `scripted:${responses}`,
    "counterfoil.allowWrites": true,
    "counterfoil.allowedCommands": [validation, greetingValidation],
    "counterfoil.receiptLog": receiptLog,
    "counterfoil.confirmTimeoutSeconds": 120,
    // The scripts end at their final answer; the final check has tests of its own
    // (heldFinal.test.ts turns it on).
    "counterfoil.checkFinalAnswer": false,
  };
}

/** The settings that are the person's alone (`machine` scope: what starts the daemon, where
 * prompts and the key go): VS Code and the daemon take them only from the person's own
 * settings, so a test puts them there, not in the folder's. */
const MACHINE_KEYS = Object.entries(
  (
    JSON.parse(readFileSync(join(extensionDir, "package.json"), "utf8")) as {
      contributes: {
        configuration: { properties: Record<string, { scope?: string }> };
      };
    }
  ).contributes.configuration.properties,
)
  .filter(([, property]) => property.scope === "machine")
  .map(([key]) => key);
/** What a test sets as the person's own: the settings above, a step limit above the default (a
 * folder may only lower a limit; a higher one would be ignored), and approval rules (a folder's
 * may not allow). */
const PERSON_KEYS = [
  ...MACHINE_KEYS,
  "counterfoil.maxSteps",
  "counterfoil.approvalRules",
];

/** The daemon's config folder in the suite's code-server (its XDG config). */
export const daemonConfigDir = join(
  stateDir,
  "code-server",
  "xdg",
  "config",
  "counterfoil",
);

/**
 * Records a test folder's grants (model, writes, commands) as Counterfoil's walkthrough does
 * when it writes them, with the daemon's own code: a folder's grants otherwise wait for the
 * person's yes, and the suite's folders stand for folders the person set up.
 */
export function confirmAsWalkthrough(
  folder: string,
  settings: Record<string, unknown>,
): void {
  const grants = Object.fromEntries(
    ["model", "allowWrites", "allowedCommands"]
      .filter((key) => `counterfoil.${key}` in settings)
      .map((key) => [key, settings[`counterfoil.${key}`]]),
  );
  if (Object.keys(grants).length === 0) {
    return;
  }
  // A value the daemon would refuse (a test of bad settings) is not recorded.
  execFileSync(python, [
    "-c",
    "import json, sys, pathlib\n" +
      "from counterfoil.settings.folder_grants import FolderGrants\n" +
      "from counterfoil.settings.layers import confirm_grants\n" +
      "for key, value in json.loads(sys.argv[2]).items():\n" +
      "    try:\n" +
      "        confirm_grants({key: value}, pathlib.Path(sys.argv[1]), 'walkthrough', " +
      "FolderGrants(pathlib.Path(sys.argv[3])))\n" +
      "    except ValueError:\n" +
      "        pass\n",
    folder,
    JSON.stringify(grants),
    daemonConfigDir,
  ]);
}

/** The user's settings, and code-server's remote ("Machine") settings beside them, get the
 * machine settings among `settings` (and lose those not among them); the rest is returned. */
function placeMachineSettings(
  settings: Record<string, unknown>,
): Record<string, unknown> {
  const user = join(stateDir, "code-server", "user");
  for (const file of [
    join(user, "User", "settings.json"),
    join(user, "Machine", "settings.json"),
  ]) {
    mkdirSync(join(file, ".."), { recursive: true });
    const current = existsSync(file)
      ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>)
      : {};
    for (const key of PERSON_KEYS) {
      if (key in settings) {
        current[key] = settings[key];
      } else {
        delete current[key];
      }
    }
    writeFileSync(file, JSON.stringify(current, null, 2));
  }
  return Object.fromEntries(
    Object.entries(settings).filter(([key]) => !PERSON_KEYS.includes(key)),
  );
}

/** How many times the daemon has logged taking settings whose model is `model` (its stderr is
 * the "Counterfoil" output channel, which VS Code keeps as a file under the profile's logs). */
function settingsTakenCount(model: string): number {
  const logs = join(stateDir, "code-server", "user", "logs");
  if (!existsSync(logs)) {
    return 0;
  }
  const line = `settings changed (model ${model});`;
  let count = 0;
  for (const name of readdirSync(logs, { recursive: true, encoding: "utf8" })) {
    if (name.endsWith(".log")) {
      count += readFileSync(join(logs, name), "utf8").split(line).length - 1;
    }
  }
  return count;
}

/**
 * Runs `change` (a write of settings files) and waits until the daemon has taken settings with
 * `model`: VS Code re-reads a changed settings file when its watcher reports it, which under
 * load can take seconds, and a run started before that would use the previous model.
 */
export async function changeSettings(
  page: Page,
  model: string,
  change: () => void,
): Promise<void> {
  const before = settingsTakenCount(model);
  change();
  const deadline = Date.now() + 30_000;
  while (settingsTakenCount(model) <= before) {
    assert.ok(
      Date.now() < deadline,
      `the daemon did not take the model ${model} within 30 s`,
    );
    await page.waitForTimeout(200);
  }
}

/** Workspace settings for the daemon, with the scripted model replaying `responses`. */
export function writeSettings(folder: string, responses: string): void {
  mkdirSync(join(folder, ".vscode"), { recursive: true });
  const settings = daemonSettings(responses);
  // Recorded first, as the walkthrough does: the daemon layers the settings when VS Code
  // re-reads the file, and a grant recorded after that would not count until the next change.
  confirmAsWalkthrough(folder, settings);
  writeFileSync(
    join(folder, ".vscode/settings.json"),
    JSON.stringify(placeMachineSettings(settings), null, 2),
  );
}

/** A fresh copy of the demo project with `settings` as its workspace settings. */
export function demoWorkspace(
  name: string,
  settings: Record<string, unknown>,
): string {
  const folder = join(stateDir, "workspaces", name);
  cpSync(demoProject, folder, { recursive: true });
  mkdirSync(join(folder, ".vscode"), { recursive: true });
  writeFileSync(
    join(folder, ".vscode/settings.json"),
    JSON.stringify(placeMachineSettings(settings), null, 2),
  );
  confirmAsWalkthrough(folder, settings);
  return folder;
}

/** A fresh copy of the demo project, set up for the fix-app script; `overrides` replace or add
 * settings. */
export function makeWorkspace(
  name: string,
  overrides: Record<string, unknown> = {},
): string {
  return demoWorkspace(name, { ...daemonSettings(fixApp), ...overrides });
}

/** A venv with none of the project's packages (and no pip), made once for the UI tests. */
export function bareVenv(): string {
  const venv = join(stateDir, "bare-venv");
  const barePython = join(venv, "bin", "python");
  if (!existsSync(barePython)) {
    execFileSync(python, ["-m", "venv", "--without-pip", venv]);
  }
  return barePython;
}

let browser: Browser;

export async function startBrowser(): Promise<Browser> {
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
  return browser;
}

/** Logs how long each step of a UI test took, so a slow step shows in the output. */
export function stepTimer(testName: string): (step: string) => void {
  let last = Date.now();
  return (step) => {
    const now = Date.now();
    console.log(`[${testName}] ${step}: ${now - last} ms`);
    last = now;
  };
}

/**
 * A window's size, and its files asked for uncompressed: code-server compresses each response
 * anew (the workbench's 11 MB script alone costs it most of a second per window), which over
 * 127.0.0.1 only takes CPU from the window being tested.
 */
export const pageOptions = {
  viewport: { width: 1440, height: 900 },
  extraHTTPHeaders: { "Accept-Encoding": "identity" },
};

export async function openPage(
  url: string,
  onConsole?: (text: string) => void,
): Promise<Page> {
  const page = await browser.newPage(pageOptions);
  page.on("console", (message) => onConsole?.(message.text()));
  page.on("pageerror", (error) => console.log(`[page error] ${error.message}`));
  await page.goto(url);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  return page;
}

/**
 * Waits until `check` holds, looking every 200 ms; fails with `what` after `timeout` ms. For
 * what the editor does a moment later (a redraw, a write, a layout): a test waits for the
 * event it checks, never for a fixed time.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string = String(check),
  timeout = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `not within ${timeout} ms: ${what}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** Drags the sash between the side bar and the editor to `width`; waits until the layout settles. */
export async function resizeSideBar(page: Page, width: number): Promise<void> {
  const side = page.locator(".part.sidebar");
  const bar = await side.boundingBox();
  assert.ok(bar, "the side bar is shown");
  const edge = bar.x + bar.width;
  const y = bar.y + bar.height / 2;
  await page.mouse.move(edge - 1, y);
  await page.mouse.down();
  await page.mouse.move(bar.x + width, y, { steps: 10 });
  await page.mouse.up();
  // The webviews over the side bar follow its layout a frame or more later: settled when the
  // side bar's width and every webview's width are the same at two looks in a row.
  const widths = async () =>
    JSON.stringify([
      (await side.boundingBox())?.width,
      await page
        .locator("iframe.webview")
        .evaluateAll((frames) =>
          frames.map((frame) => frame.getBoundingClientRect().width),
        ),
    ]);
  let last = "";
  await until(
    async () => last === (last = await widths()),
    `the side bar settles at ${width} px`,
  );
}

/**
 * A second code-server with a profile of its own and the .vsix just installed, as a person's
 * first install is; `stop` ends it with every extension host and daemon it started.
 */
export function freshEditor(name: string): { url: string; stop: () => void } {
  const state = join(stateDir, `fresh-${name}`);
  const port = execFileSync(
    "bash",
    [
      "-c",
      'source "$1" && code_server_prepare "$2" "$3" "$4" >&2 && port="$(code_server_free_port)" && code_server_start "$2" "$3" "$port" >&2 && echo "$port"',
      "fresh-editor",
      join(extensionDir, "scripts/code-server.sh"),
      required("COUNTERFOIL_CODE_SERVER_BIN"),
      state,
      join(extensionDir, "counterfoil.vsix"),
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  ).trim();
  const stop = () => {
    const group = Number(readFileSync(join(state, "code-server.pgid"), "utf8"));
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // already ended
    }
  };
  return { url: `http://127.0.0.1:${port}`, stop };
}

/** A window with `folder` open. */
export async function openFolder(folder: string): Promise<Page> {
  return openPage(`${editorUrl}/?folder=${encodeURIComponent(folder)}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  // Notifications fading in are shown as they end: animations are run to their end.
  await page.screenshot({
    path: join(artifacts, name),
    animations: "disabled",
  });
}

/** A failure's screenshot, and what the workbench said in words (the run panel, the
 * notifications, the status bar) printed to the test log, which outlives the picture in CI. */
export async function failureScreenshot(
  page: Page,
  name: string,
): Promise<void> {
  await screenshot(page, name).catch(() => undefined);
  // Each read gives up after 2 s: a page in a bad state must not hang the report.
  const words = async (texts: Promise<string[]>): Promise<string> =>
    (
      await Promise.race([
        texts.catch(() => [] as string[]),
        new Promise<string[]>((done) => setTimeout(() => done([]), 2_000)),
      ])
    )
      .join(" | ")
      .replace(/\s+/g, " ")
      .slice(0, 2_000);
  console.log(
    `# [${name}] run panel: ${await words(runPanel(page).locator("body").allInnerTexts())}`,
  );
  console.log(
    `# [${name}] notifications: ${await words(page.locator(".notifications-toasts .notification-toast").allInnerTexts())}`,
  );
  console.log(
    `# [${name}] status bar: ${await words(page.locator(".statusbar-item", { hasText: /Counterfoil/ }).allInnerTexts())}`,
  );
}

/** Shows the Counterfoil view. A click on its activity-bar icon toggles it, and after a reload
 * VS Code may restore the view between a look and a click, so it looks again after each. */
export async function showCounterfoilView(page: Page): Promise<void> {
  const item = page.locator(".activitybar .action-item", {
    has: page.locator('a[aria-label^="Counterfoil"]'),
  });
  const shown = item.and(page.locator(".checked"));
  for (let tries = 0; tries < 3; tries++) {
    if (((await item.getAttribute("class")) ?? "").includes("checked")) {
      return;
    }
    await item.locator("a").click();
    try {
      await shown.waitFor({ timeout: 2_000 });
    } catch {
      // Toggled closed by a restore that came first: look and click again.
    }
  }
}

/** The Receipts view's pane in the Counterfoil side bar. */
export function receiptsPane(page: Page): Locator {
  return page.locator(".pane", {
    has: page.locator(".pane-header", { hasText: "Receipts" }),
  });
}

/**
 * Waits until the run `runGoal` shows its verdict in the receipts tree. The refresh a run's end
 * brings redraws every row and its actions; a click or a hover that lands while they are
 * redrawn reaches nothing (seen beside two busy loops: the Revert button hovered, no request
 * sent). The verdict is what that refresh draws.
 */
export async function waitForVerdictInTree(
  page: Page,
  runGoal: string,
): Promise<void> {
  await receiptsPane(page)
    .locator(".monaco-list-row", { hasText: runGoal })
    .filter({ hasText: /validat/ })
    .first()
    .waitFor({ timeout: 30_000 });
}

/**
 * Clicks the inline Revert of the first receipt row that reads `rowText`, once the tree is drawn,
 * until `opened` (what the revert shows: its diff, its question) is visible. A refresh of the
 * tree in flight (the run's end redraws it) can leave a click without its receipt; Counterfoil
 * then says so, and the click is made again, as a person would: that answer is the handshake.
 */
export async function clickRevert(
  page: Page,
  rowText: string,
  runGoal: string,
  opened: Locator,
): Promise<void> {
  await waitForVerdictInTree(page, runGoal);
  const row = receiptsPane(page)
    .locator(".monaco-list-row", { hasText: rowText })
    .first();
  const missed = page
    .locator(".notifications-toasts .notification-toast", {
      hasText: NO_RECEIPT_TO_REVERT,
    })
    .first();
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    await row.waitFor({ timeout: 30_000 });
    await row.hover();
    await row.locator('.action-label[aria-label^="Revert"]').click();
    await opened.or(missed).first().waitFor({ timeout: 30_000 });
    if (!(await missed.isVisible())) {
      return;
    }
    await clearNotifications(page);
    await missed.waitFor({ state: "hidden" });
  }
  assert.fail("three Revert clicks in a row reached no receipt");
}

/** Opens the Counterfoil view (which activates the extension) and waits for the daemon. */
export async function waitForDaemon(page: Page): Promise<void> {
  await showCounterfoilView(page);
  await page
    .locator(".statusbar-item", {
      hasText: /Counterfoil: (?!stopped|not running)/,
    })
    .first()
    .waitFor({ timeout: 60_000 });
}

export async function runCommand(page: Page, title: string): Promise<void> {
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

/** Opens a workspace file through Quick Open, as a person does. */
export async function openFile(page: Page, name: string): Promise<void> {
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").fill(name);
  await page
    .locator(".quick-input-list .monaco-list-row.focused", { hasText: name })
    .waitFor();
  await page.keyboard.press("Enter");
  await page
    .locator(".tabs-container .tab.active", { hasText: name })
    .waitFor();
}

export async function startRun(page: Page, goal: string): Promise<void> {
  await runCommand(page, "Counterfoil: Run Agent…");
  const input = page.locator(".quick-input-widget input");
  await page
    .locator(".quick-input-widget", { hasText: "What should the agent do?" })
    .waitFor();
  await input.fill(goal);
  await page.keyboard.press("Enter");
}

/** The active editor group's title-bar action with this label (not the notification button). */
export function editorTitleAction(page: Page, label: string) {
  // Exactly `label`, or `label (keybinding)`: not "Reject with Reason…".
  const actions =
    ".editor-group-container.active .editor-actions a.action-label";
  return page.locator(
    `${actions}[aria-label="${label}"], ${actions}[aria-label^="${label} ("]`,
  );
}

export async function waitForProposalDiff(
  page: Page,
  title: string | RegExp = /edit_file app\.py \(call-\d+\)/,
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

/** Answers a modal dialog (a folder's grants) with `answer`; returns its text. */
export async function answerModal(
  page: Page,
  answer: "Allow" | "Cancel",
): Promise<string> {
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: 30_000 });
  const text = await dialog.innerText();
  await screenshot(page, `modal-${answer.toLowerCase()}.png`);
  await dialog
    .locator(".dialog-buttons .monaco-button", {
      hasText: new RegExp(`^${answer}$`),
    })
    .click();
  await dialog.waitFor({ state: "detached" });
  return text;
}

/**
 * Answers a command's question in its notification (never a modal) and returns the question's
 * text: its argv, folder and how it runs.
 */
export async function answerCommandQuestion(
  page: Page,
  answer: "Accept" | "Reject",
): Promise<string> {
  const toast = commandQuestion(page);
  await toast.waitFor({ timeout: 30_000 });
  const text = await toast.innerText();
  await screenshot(page, `command-question-${answer.toLowerCase()}.png`);
  await toast
    .locator(".monaco-button", { hasText: new RegExp(`^${answer}$`) })
    .click();
  await toast.waitFor({ state: "detached" });
  return text;
}

/** The notification that asks about a command. */
export function commandQuestion(page: Page): Locator {
  return page
    .locator(".notifications-toasts .notification-toast", {
      hasText: "Counterfoil wants to run a command",
    })
    .first();
}

export async function waitForNotification(
  page: Page,
  text: string | RegExp,
): Promise<string> {
  const toast = page
    .locator(".notifications-toasts .notification-toast", { hasText: text })
    .first();
  await toast.waitFor({ timeout: 30_000 });
  return toast.innerText();
}

export async function clearNotifications(page: Page): Promise<void> {
  await runCommand(page, "Notifications: Clear All Notifications");
}

/** The log's lines as the daemon declares them (their chain link and signature aside). */
export function receiptsOnDisk(workspace: string): LoggedReceipt[] {
  if (!existsSync(join(workspace, receiptLog))) {
    return [];
  }
  return readFileSync(join(workspace, receiptLog), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as LoggedReceipt);
}

export function verifyWithCli(workspace: string): {
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

/** The texts of every log file VS Code wrote for this output channel, newest sessions included. */
export function outputChannelLog(channel: string): string[] {
  const logs = join(stateDir, "code-server", "user", "logs");
  return readdirSync(logs, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(`${channel}.log`))
    .map((path) => readFileSync(join(logs, path), "utf8"));
}

/** The run panel's content (a webview: an iframe inside an iframe). */
export function runPanel(page: Page): FrameLocator {
  return (
    page
      // Counterfoil's webview view, not another webview (a walkthrough's media is one too).
      .frameLocator(
        'iframe.webview[src*="extensionId=counterfoil.counterfoil"][src*="purpose=webviewView"]',
      )
      .first()
      .frameLocator("#active-frame")
  );
}

/**
 * The fix-app script's end, on disk: app.py fixed, an `ok` edit and an `ok` validation receipt,
 * and a log that `counterfoil receipts verify` accepts.
 */
export function assertFixAppLanded(workspace: string, original: string): void {
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
  const verified = verifyWithCli(workspace);
  assert.equal(verified.status, 0, verified.output);
}

/** Reloads the window the way `how` says and waits for the workbench to be back. */
export async function reload(
  page: Page,
  how: "browser" | "command",
): Promise<void> {
  if (how === "browser") {
    await page.reload();
  } else {
    const loaded = page.waitForEvent("load", { timeout: 60_000 });
    await runCommand(page, "Developer: Reload Window");
    await loaded;
  }
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
}

/**
 * `selector` (with `text`) where the run panel shows it. After a reload the workbench may hold
 * more than one of Counterfoil's webview frames (one of them no longer shown), so every frame
 * is looked in, and the visible match is the one.
 */
/**
 * Scrolls a run-panel element into view. The panel renders anew on each change (its nodes
 * replaced: a folder's settings listed, the look for a run to resume ended), so a node found a
 * moment ago may be gone by the time it is scrolled to: the locator is then resolved again.
 */
export async function scrollIntoView(locator: Locator): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await locator.scrollIntoViewIfNeeded({ timeout: 30_000 });
      return;
    } catch (error) {
      if (attempt >= 5 || !String(error).includes("not attached")) {
        throw error;
      }
    }
  }
}

export async function inPanel(
  page: Page,
  selector: string,
  text?: string,
): Promise<Locator> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const found = frame.locator(selector, text ? { hasText: text } : {});
      if ((await found.count()) > 0 && (await found.first().isVisible())) {
        return found.first();
      }
    }
    await page.waitForTimeout(500);
  }
  throw new Error(`the run panel showed no ${selector} within 60 s`);
}

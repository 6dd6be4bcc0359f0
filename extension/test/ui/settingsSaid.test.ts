// What the editor says of settings that are not taken as written, in a real VS Code against the
// real daemon: one invalid value of the person's is refused alone (the run panel and Check
// Setup say which, why and what is used instead; the chosen model still runs), and every value
// a folder set is listed with what became of it, the person's-alone ones VS Code drops too.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  clearNotifications,
  failureScreenshot,
  inPanel,
  makeWorkspace,
  openFolder,
  outputChannelLog,
  python,
  runCommand,
  screenshot,
  scrollIntoView,
  startBrowser,
  startRun,
  stepTimer,
  until,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
} from "./workbench";

let browser: Browser;

/** Check Setup's report for `workspace`, once it has ended (its last line), as the output
 * channel's log keeps it. */
async function checkSetupReport(
  page: Page,
  workspace: string,
  name: string,
): Promise<string> {
  await runCommand(page, "Counterfoil: Check Setup");
  const ended = (text: string) =>
    text.includes(workspace) && /^(problems: |no problems found)/m.test(text);
  try {
    await until(
      () => outputChannelLog("Counterfoil Setup").some(ended),
      "Check Setup's report",
      60_000,
    );
  } catch (error) {
    await failureScreenshot(page, `failure-${name}.png`);
    throw error;
  }
  await screenshot(page, `${name}.png`);
  return outputChannelLog("Counterfoil Setup").filter(ended).join("\n");
}

describe("settings not taken as written", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("an invalid setting is refused alone: the run panel and Check Setup say which, why and what is used, and the chosen model runs", async () => {
    const step = stepTimer("refused setting");
    // maxSteps is the person's own (a folder may only lower it): set where a person sets it.
    const workspace = makeWorkspace("refused-setting", {
      "counterfoil.maxSteps": -5,
    });
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      const said =
        "maxSteps must be an integer from 1 to 10000; using 8 (the default)";
      const toast = await waitForNotification(page, "maxSteps must be");
      assert.match(toast.replace(/\s/g, " "), /using 8 \(the default\)/);
      const line = await inPanel(page, ".refused-settings li", said);
      assert.equal(await line.innerText(), said);
      await scrollIntoView(line);
      await screenshot(page, "settings-refused-panel.png");
      step("the panel says it");

      await clearNotifications(page);
      const report = await checkSetupReport(
        page,
        workspace,
        "settings-refused-check-setup",
      );
      assert.match(
        report,
        new RegExp(`BAD your setting: ${said.replace(/[()]/g, "\\$&")}`),
      );
      step("check setup says it");

      // The other settings stand: the scripted model chosen runs and proposes its edit.
      await startRun(page, "make tests/test_math.py pass");
      await waitForProposalDiff(page);
      await screenshot(page, "settings-refused-run-proposes.png");
      step("the chosen model ran");
    } catch (error) {
      await failureScreenshot(page, "failure-refused-setting.png");
      throw error;
    } finally {
      await page.close();
    }
  });

  test("every value a folder set is listed with what became of it, the person's-alone ones VS Code drops too", async () => {
    const step = stepTimer("folder values");
    const workspace = makeWorkspace("folder-values");
    const file = join(workspace, ".vscode", "settings.json");
    const written = JSON.parse(readFileSync(file, "utf8")) as Record<
      string,
      unknown
    >;
    const folders: Record<string, unknown> = {
      "counterfoil.endpoint": "http://127.0.0.1:9/v1",
      "counterfoil.apiKeyEnv": "HOME",
      "counterfoil.allowInsecureHttp": true,
      "counterfoil.engine": "llama.cpp",
      "counterfoil.mcpServers": [
        { name: "notes", command: ["node", "notes.js"] },
      ],
      "counterfoil.serverCommand": ["sh", "-c", "echo"],
      "counterfoil.pythonPath": python,
      "counterfoil.maxTokens": 64,
    };
    writeFileSync(file, JSON.stringify({ ...written, ...folders }, null, 2));
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      const lines = new Map<string, string>();
      for (const key of Object.keys(folders).map((key) =>
        key.slice("counterfoil.".length),
      )) {
        const line = await inPanel(page, ".folder-settings li", `${key} = `);
        lines.set(key, await line.innerText());
      }
      for (const key of [
        "endpoint",
        "apiKeyEnv",
        "allowInsecureHttp",
        "engine",
        "mcpServers",
        "serverCommand",
        "pythonPath",
      ]) {
        assert.match(
          lines.get(key) ?? "",
          /: ignored \(yours kept\); the person's alone/,
          key,
        );
      }
      assert.match(
        lines.get("maxTokens") ?? "",
        /: applies \(stricter than yours\)/,
      );
      const first = await inPanel(page, ".folder-settings li", "endpoint = ");
      await scrollIntoView(first);
      await screenshot(page, "settings-folder-values-panel.png");
      step("the panel lists them");

      const report = await checkSetupReport(
        page,
        workspace,
        "settings-folder-values-check-setup",
      );
      assert.match(
        report,
        /folder setting: endpoint = "http:\/\/127\.0\.0\.1:9\/v1": ignored/,
      );
      step("check setup lists them");
    } catch (error) {
      await failureScreenshot(page, "failure-folder-values.png");
      throw error;
    } finally {
      await page.close();
    }
  });
});

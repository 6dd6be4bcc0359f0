// A run through a model server, in a real VS Code against the real daemon: `mlx_lm.server` on
// 127.0.0.1 serving a model whose weights answer a script (an offline stand-in for a capable
// model: a random one never writes a valid action). Its first answer is prose, which
// mlx_lm.server lets through because it does not enforce the schema: the run panel says so for
// that step. Then it reads app.py, proposes the fix (accepted in the diff) and the validation
// command (accepted in the modal), and the run ends validated, with receipts on disk.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  answerCommandQuestion,
  assertFixAppLanded,
  editorTitleAction,
  failureScreenshot,
  fixApp,
  makeWorkspace,
  openFolder,
  python,
  runPanel,
  screenshot,
  scriptedWeightsModel,
  startBrowser,
  stateDir,
  stepTimer,
  validation,
  waitForDaemon,
  waitForProposalDiff,
} from "./workbench";

let browser: Browser;
let server: ChildProcess | undefined;

/**
 * `python -m mlx_lm server` serving `model` on a free port (started by the project's own
 * starter, which prints the base URL once the server answers).
 */
async function startMlxServer(model: string): Promise<string> {
  const log = join(stateDir, "mlx-server.log");
  const started = spawn(
    python,
    ["-m", "counterfoil.testing.local_mlx_server", model, log],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  server = started;
  return new Promise((done, fail) => {
    let said = "";
    started.stdout.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes("\n")) {
        done(said.trim());
      }
    });
    started.on("exit", (code) =>
      fail(new Error(`mlx_lm server exited (${code}): ${readLog(log)}`)),
    );
  });
}

function readLog(log: string): string {
  try {
    return readFileSync(log, "utf8").slice(-2000);
  } catch {
    return "(no log)";
  }
}

const answers = [
  "I will read app.py first.",
  ...readFileSync(fixApp, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== ""),
];

describe("a run through a local mlx_lm.server", () => {
  let page: Page;
  let port: string;
  let workspace: string;

  before(async () => {
    const step = stepTimer("endpoint");
    const model = scriptedWeightsModel("endpoint", answers);
    const url = await startMlxServer(model);
    port = new URL(url).port;
    step("mlx_lm.server answering");
    browser = await startBrowser();
    workspace = makeWorkspace("endpoint", {
      "counterfoil.endpoint": url,
      // mlx_lm.server serves the model under the path it was started with.
      "counterfoil.model": model,
      "counterfoil.maxTokens": 16,
    });
    page = await openFolder(workspace);
    await waitForDaemon(page);
    step("daemon ready");
  });

  after(async () => {
    await page?.close();
    await browser?.close();
    server?.kill();
  });

  test("the server's proposals are approved in the editor and the run ends validated", async () => {
    const step = stepTimer("endpoint");
    const original = readFileSync(join(workspace, "app.py"), "utf8");
    const panel = runPanel(page);
    await panel.locator("#message").fill("make tests/test_math.py pass");
    await panel.locator("#send").click();
    const endpoint = page
      .locator(".statusbar-item", { hasText: `@ 127.0.0.1:${port}` })
      .first();
    await endpoint.waitFor({ timeout: 60_000 });
    step("status bar names the server");

    await waitForProposalDiff(page);
    step("the server's edit shown as a diff");
    assert.equal(
      readFileSync(join(workspace, "app.py"), "utf8"),
      original,
      "nothing is written before Accept",
    );
    await editorTitleAction(page, "Accept").click();
    const modal = await answerCommandQuestion(page, "Accept");
    assert.ok(modal.includes(`argv: ${JSON.stringify(validation)}`), modal);
    step("edit and command accepted");

    const turn = panel.locator(".turn").last();
    const verdict = turn.locator(".verdict");
    try {
      await verdict.waitFor({ timeout: 60_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-endpoint-no-verdict.png");
      throw error;
    }
    step("verdict");
    await page.mouse.move(10, 10);
    await screenshot(page, "endpoint-run.png");

    const steps = turn.locator(".step");
    assert.equal(await steps.count(), answers.length);
    const first = steps.first();
    assert.match(
      await first.locator(".observation").innerText(),
      /^Observation: error: /,
      "the prose answer is an invalid-action observation",
    );
    assert.match(
      await first.locator(".model-note").innerText(),
      /^Model server: .*this server does not enforce the schema$/,
    );
    assert.match(
      await steps.nth(1).locator(".model-note").innerText(),
      /prompt tokens cached/,
      "later steps report the server's prefix cache",
    );
    const lines = await verdict.innerText();
    assert.match(lines, /Validation passed/);
    assert.match(
      lines,
      new RegExp(
        `Model usage: ${answers.length} responses, [\\d,]+ prompt tokens \\([\\d,]+ from the cache\\), [\\d,]+ generated`,
      ),
    );
    assert.match(lines, /app\.py/);

    assertFixAppLanded(workspace, original);
  });
});

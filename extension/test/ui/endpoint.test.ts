// A run through a model server, in a real VS Code against the real daemon: `mlx_lm.server` on
// 127.0.0.1 serving the offline tiny random-weight model. The status bar names the server, the
// run panel shows the text the server streamed, and the run ends with a verdict. A random model
// cannot write a valid action, and mlx_lm.server does not enforce the schema, so each step is an
// invalid-action observation and the run stops at the invalid-action limit.

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, FrameLocator, Page } from "playwright-core";
import {
  editorUrl,
  makeWorkspace,
  openPage,
  python,
  screenshot,
  startBrowser,
  stateDir,
  stepTimer,
  waitForDaemon,
} from "./workbench";

let browser: Browser;
let server: ChildProcess | undefined;

function runPanel(page: Page): FrameLocator {
  return page
    .frameLocator("iframe.webview")
    .first()
    .frameLocator("#active-frame");
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.on("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address
          ? done(address.port)
          : fail(new Error("no port")),
      );
    });
  });
}

/** The tiny random-weight model, built offline once and cached. */
function tinyModelDir(): string {
  const built = spawnSync(
    python,
    [
      "-c",
      "from counterfoil.models.tiny_model import cached_tiny_model; print(cached_tiny_model())",
    ],
    { encoding: "utf8" },
  );
  assert.equal(built.status, 0, built.stderr);
  return built.stdout.trim();
}

/** `python -m mlx_lm server` on `port`, once it answers `/v1/models`. */
async function startMlxServer(model: string, port: number): Promise<string> {
  const log = join(stateDir, "mlx-server.log");
  const output = openSync(log, "w");
  server = spawn(
    python,
    [
      "-m",
      "mlx_lm",
      "server",
      "--model",
      model,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
    ],
    {
      stdio: ["ignore", output, output],
      env: { ...process.env, HF_HUB_OFFLINE: "1" },
    },
  );
  const url = `http://127.0.0.1:${port}/v1`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) {
      throw new Error(`mlx_lm server exited: ${readFileSync(log, "utf8")}`);
    }
    try {
      const answer = await fetch(`${url}/models`);
      if (answer.ok) {
        return url;
      }
    } catch {
      // not listening yet
    }
    await new Promise((wait) => setTimeout(wait, 200));
  }
  throw new Error("mlx_lm server did not start within 120 s");
}

describe("a run through a local mlx_lm.server", () => {
  let page: Page;
  let port: number;

  before(async () => {
    const step = stepTimer("endpoint");
    const model = tinyModelDir();
    port = await freePort();
    const url = await startMlxServer(model, port);
    step("mlx_lm.server answering");
    browser = await startBrowser();
    const workspace = makeWorkspace("endpoint");
    const file = join(workspace, ".vscode/settings.json");
    const settings = JSON.parse(readFileSync(file, "utf8")) as object;
    writeFileSync(
      file,
      JSON.stringify(
        {
          ...settings,
          "counterfoil.endpoint": url,
          // mlx_lm.server serves the model under the path it was started with.
          "counterfoil.model": model,
          "counterfoil.allowWrites": true,
          "counterfoil.maxTokens": 16,
        },
        null,
        2,
      ),
    );
    page = await openPage(
      `${editorUrl}/?folder=${encodeURIComponent(workspace)}`,
    );
    await waitForDaemon(page);
    step("daemon ready");
  });

  after(async () => {
    await page?.close();
    await browser?.close();
    server?.kill();
  });

  test("the status bar names the server, the panel shows its streamed text, and the run ends with a verdict", async () => {
    const step = stepTimer("endpoint");
    const panel = runPanel(page);
    await panel.locator("#message").fill("Change the greeting to Welcome.");
    await panel.locator("#send").click();
    const endpoint = page
      .locator(".statusbar-item", { hasText: `@ 127.0.0.1:${port}` })
      .first();
    await endpoint.waitFor({ timeout: 60_000 });
    step("status bar names the server");
    const turn = panel.locator(".turn").last();
    const verdict = turn.locator(".verdict");
    try {
      await verdict.waitFor({ timeout: 60_000 });
    } catch (error) {
      await screenshot(page, "failure-endpoint-no-verdict.png");
      throw error;
    }
    step("verdict");
    await page.mouse.move(10, 10);
    await screenshot(page, "endpoint-run.png");

    const texts = await turn.locator(".step .model-text").allInnerTexts();
    assert.ok(
      texts.length > 0 && texts.every((text) => text.trim() !== ""),
      `each step shows the text the server streamed: ${JSON.stringify(texts)}`,
    );
    const observations = await turn
      .locator(".step .observation")
      .allInnerTexts();
    assert.ok(
      observations.length === texts.length &&
        observations.every((text) =>
          text.startsWith("Observation: error: response is not a JSON object"),
        ),
      `a random model's text is an invalid action: ${JSON.stringify(observations)}`,
    );
    const lines = await verdict.innerText();
    assert.match(lines, /Run stopped: invalid_action_limit/);
    assert.match(lines, /No files changed/);
  });
});

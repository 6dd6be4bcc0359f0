// A model download as a person meets it, in a real VS Code against the real daemon: the model
// setting names a hub model that is not in the (private) cache, and the hub is a local server
// (tests/support/hub_server.py, reached through HF_ENDPOINT) that sends the weights slowly enough to
// watch. Starting a run shows a cancellable notification with bytes, rate and time left and
// `downloading N % of …` in the status bar; Cancel keeps the partial file and starts no run; the
// next run resumes from it. A wrong name is one message with a button that opens the setting.
// The served weights are not a real model, so the run after the download fails to load it: these
// tests are about the download, not the run.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  makeWorkspace,
  python,
  repoRoot,
  screenshot,
  startBrowser,
  startRun,
  stateDir,
  stepTimer,
  waitForDaemon,
  waitForNotification,
  openFolder,
} from "./workbench";

const REPO = "owner/tiny";
const MIB = 1024 * 1024;
// The hub client reads 10 MiB at a time, so at about 5 MiB/s the first progress with a rate comes
// about 2 s in, and Cancel has until about 6 s to arrive before the download ends.
const WEIGHTS_BYTES = 32 * MIB;

interface HubRequest {
  method: string;
  path: string;
  range: string | null;
  status: number;
}

interface Hub {
  url: string;
  requests: HubRequest[];
  process: ChildProcess;
}

let browser: Browser;
let hub: Hub | undefined;

/** tests/support/hub_server.py serving REPO, about 5 MiB/s: the URL it printed and its request log. */
async function startHub(): Promise<Hub> {
  const child = spawn(
    python,
    [
      join(repoRoot, "tests/support/hub_server.py"),
      join(stateDir, "hub-repo"),
      "--repo",
      REPO,
      "--weights-bytes",
      String(WEIGHTS_BYTES),
      "--piece-bytes",
      String(256 * 1024),
      "--seconds-per-piece",
      "0.05",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const requests: HubRequest[] = [];
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((done, fail) => {
    child.once("exit", (code) =>
      fail(new Error(`tests/support/hub_server.py exited with ${code}`)),
    );
    lines.once("line", done);
  });
  lines.on("line", (line) => requests.push(JSON.parse(line) as HubRequest));
  return { url, requests, process: child };
}

/** A copy of the demo project whose daemon sees the local hub and a cache of its own. */
function downloadWorkspace(
  name: string,
  model: string,
  url: string,
): { workspace: string; hfHome: string } {
  const hfHome = join(stateDir, `hf-home-${name}`);
  const workspace = makeWorkspace(name, {
    "counterfoil.model": model,
    // The daemon inherits the editor's environment; `env` gives this folder's daemon the hub's
    // address and an empty cache, as a person with a mirror of the hub would.
    "counterfoil.serverCommand": [
      "env",
      "-u",
      "HF_HUB_OFFLINE",
      `HF_ENDPOINT=${url}`,
      `HF_HOME=${hfHome}`,
      python,
      "-m",
      "counterfoil",
      "serve",
    ],
  });
  return { workspace, hfHome };
}

/** The cache's blobs of REPO: name and size, partial files included. */
function blobs(hfHome: string): Array<{ name: string; size: number }> {
  const folder = join(hfHome, "hub", "models--owner--tiny", "blobs");
  if (!existsSync(folder)) {
    return [];
  }
  return readdirSync(folder).map((name) => ({
    name,
    size: statSync(join(folder, name)).size,
  }));
}

function weightsGets(): HubRequest[] {
  return (hub?.requests ?? []).filter(
    (request) =>
      request.method === "GET" && request.path.endsWith("/model.safetensors"),
  );
}

function statusBarItem(page: Page, text: RegExp) {
  return page.locator(".statusbar-item", { hasText: text }).first();
}

describe("downloading a hub model before a run", () => {
  before(async () => {
    hub = await startHub();
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
    hub?.process.kill();
  });

  test("a wrong model name is one message whose button opens the model setting", async () => {
    const step = stepTimer("download-404");
    const url = hub!.url;
    const { workspace } = downloadWorkspace(
      "download-missing",
      "owner/missing",
      url,
    );
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await startRun(page, "make tests/test_math.py pass");
      const message = await waitForNotification(page, /was not found on/);
      step("message shown");
      assert.match(
        message,
        new RegExp(
          `model owner/missing was not found on ${url.replace(/[.]/g, "\\.")}; check the name, or choose another model`,
        ),
      );
      assert.match(message, /a local model folder, a model server endpoint/);
      await page.waitForTimeout(1000); // a second message would have arrived by now
      const toasts = page.locator(".notifications-toasts .notification-toast");
      assert.equal(
        await toasts.count(),
        1,
        `one message: ${JSON.stringify(await toasts.allInnerTexts())}`,
      );
      await screenshot(page, "download-not-found.png");
      await toasts
        .first()
        .locator(".monaco-button", { hasText: "Open the model setting" })
        .click();
      await page
        .locator(".settings-editor .setting-item-contents", {
          hasText: "counterfoil.model",
        })
        .or(
          page.locator(".settings-editor .setting-item-contents", {
            hasText: /Counterfoil.*Model/,
          }),
        )
        .first()
        .waitFor({ timeout: 30_000 });
      assert.match(
        await page.locator(".settings-editor .search-container").innerText(),
        /counterfoil\.model/,
      );
      await screenshot(page, "download-not-found-setting.png");
      assert.ok(
        weightsGets().length === 0,
        "nothing was fetched for a name the hub does not have",
      );
    } finally {
      await page.close();
    }
  });

  test("the download shows its progress, stops on Cancel without starting the run, and the next run resumes it", async () => {
    const step = stepTimer("download");
    const { workspace, hfHome } = downloadWorkspace("download", REPO, hub!.url);
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      step("daemon up");
      await startRun(page, "make tests/test_math.py pass");
      const progress = page
        .locator(".notifications-toasts .notification-toast", {
          hasText: `Counterfoil: downloading ${REPO}`,
        })
        .first();
      await progress.waitFor({ timeout: 30_000 });
      // Bytes of the total, the rate and the time left, once the first chunk has arrived.
      const detail =
        /(\d+\.\d) MiB of 32\.0 MiB, \d+\.\d (KiB|MiB)\/s, (\d+ min )?\d+ s left/;
      await page
        .locator(".notifications-toasts .notification-toast", {
          hasText: detail,
        })
        .waitFor({ timeout: 30_000 });
      const shown = await progress.innerText();
      const bar = statusBarItem(
        page,
        /Counterfoil: downloading \d+ % of 32\.0 MiB/,
      );
      await bar.waitFor({ timeout: 10_000 });
      const percent = Number(
        /downloading (\d+) %/.exec(await bar.innerText())![1],
      );
      await screenshot(page, "download-progress.png");
      step("progress shown");
      assert.match(shown, detail);
      assert.ok(percent < 100, `the status bar shows ${percent} %`);

      await progress.locator(".monaco-button", { hasText: /^Cancel$/ }).click();
      await waitForNotification(
        page,
        `Counterfoil run not started: the download of ${REPO} was cancelled; what arrived is kept for the next try.`,
      );
      await progress.waitFor({ state: "detached", timeout: 10_000 });
      await statusBarItem(page, /Counterfoil: unloaded/).waitFor({
        timeout: 10_000,
      });
      step("cancelled");
      const partial = blobs(hfHome).find((blob) =>
        blob.name.endsWith(".incomplete"),
      );
      assert.ok(
        partial,
        `a partial file is kept: ${JSON.stringify(blobs(hfHome))}`,
      );
      assert.ok(
        partial.size > 0 && partial.size < WEIGHTS_BYTES,
        `the partial file holds part of the weights: ${partial.size} bytes`,
      );
      await page.waitForTimeout(500);
      assert.equal(
        blobs(hfHome).find((blob) => blob.name === partial.name)?.size,
        partial.size,
        "the download stopped",
      );
      assert.equal(
        await page
          .locator(".notifications-toasts .notification-toast", {
            hasText: /Counterfoil (finished|run failed|run stopped)/,
          })
          .count(),
        0,
        "no run started",
      );
      await screenshot(page, "download-cancelled.png");

      const before = weightsGets().length;
      await startRun(page, "make tests/test_math.py pass");
      await progress.waitFor({ timeout: 30_000 });
      step("resumed");
      await progress.waitFor({ state: "detached", timeout: 60_000 });
      step("download done");
      const resumed = weightsGets().slice(before);
      assert.deepEqual(
        resumed.map((request) => [request.range, request.status]),
        [[`bytes=${partial.size}-`, 206]],
        "the next run asked only for the rest of the weights",
      );
      const complete = blobs(hfHome);
      assert.ok(
        complete.some(
          (blob) =>
            !blob.name.endsWith(".incomplete") && blob.size === WEIGHTS_BYTES,
        ) && !complete.some((blob) => blob.name.endsWith(".incomplete")),
        `the weights are whole in the cache: ${JSON.stringify(complete)}`,
      );
      assert.ok(
        existsSync(
          join(
            hfHome,
            "hub",
            "models--owner--tiny",
            "snapshots",
            "0123456789abcdef0123456789abcdef01234567",
            "model.safetensors",
          ),
        ),
        "the snapshot is laid out for the model loader",
      );
      // The run starts on the downloaded files; they are not a real model, so it stops there.
      await waitForNotification(
        page,
        /Counterfoil run stopped \(model_error: could not load model 'owner\/tiny'/,
      );
      await screenshot(page, "download-resumed.png");
    } finally {
      await page.close();
    }
  });
});

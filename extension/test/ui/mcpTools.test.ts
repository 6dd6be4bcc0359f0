// MCP tools, in a real VS Code against the real daemon and a real MCP server (the tests' own,
// over stdio, started confined): the server is in the person's user settings; the first use of
// each tool asks its definition (server, name, description, input schema) as a command is asked,
// in a notification and the run panel; the call is asked with its exact arguments; its receipt
// is the receipts tree's row, by server and tool.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  failureScreenshot,
  makeWorkspace,
  openFolder,
  python,
  receiptsOnDisk,
  receiptsPane,
  repoRoot,
  runPanel,
  screenshot,
  showCounterfoilView,
  startBrowser,
  stateDir,
  stepTimer,
  waitForDaemon,
  writeResponses,
} from "./workbench";

const SERVER_FILE = join(repoRoot, "server/counterfoil/testing/mcp_servers.py");
const TOOL_COUNT = 11; // the test server's tools, each asked about on first use
const CALL = {
  tool: "mcp_call",
  server: "files",
  name: "read",
  arguments: { path: "notes.txt" },
};

let browser: Browser;

function toast(page: Page, text: string) {
  return page
    .locator(".notifications-toasts .notification-toast", { hasText: text })
    .first();
}

describe("MCP tools", () => {
  let page: Page | undefined;

  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await page?.close();
    await browser?.close();
  });

  test("the first use of each tool asks its definition, the call is asked with its arguments, and its receipt is in the tree", async () => {
    const step = stepTimer("mcp-tools");
    const responses = writeResponses("mcp-tools.jsonl", CALL, {
      final: "read the notes",
    });
    const folder = join(stateDir, "workspaces", "mcp-tools"); // what makeWorkspace makes
    const workspace = makeWorkspace("mcp-tools", {
      "counterfoil.model": `scripted:${responses}`,
      // A machine setting: the suite puts it in the person's user settings.
      "counterfoil.mcpServers": [
        { name: "files", command: [python, SERVER_FILE, folder] },
      ],
    });
    assert.equal(workspace, folder);
    writeFileSync(join(workspace, "notes.txt"), "the notes\n");
    page = await openFolder(workspace);
    await waitForDaemon(page);
    step("daemon ready");
    const panel = runPanel(page);
    await panel.locator("#message").fill("read the notes");
    await panel.locator("#send").click();

    const asked: string[] = [];
    try {
      for (let index = 0; index < TOOL_COUNT; index += 1) {
        const question = toast(page, "Offer the MCP tool");
        await question.waitFor({ timeout: 60_000 });
        const text = await question.innerText();
        asked.push(text);
        if (text.includes("files/read")) {
          const detail = await panel
            .locator(".proposal.state-pending .proposal-detail")
            .innerText();
          assert.match(detail, /^server: files \(stdio: /m);
          assert.match(detail, /^description: Read a file of the folder\.$/m);
          assert.match(detail, /^input schema: \{/m);
          // A No to a definition answers no call of the model's: no reason to give it.
          assert.equal(
            await question
              .locator(".monaco-button", { hasText: "Reject with Reason…" })
              .count(),
            0,
          );
          await screenshot(page, "mcp-definition-asked.png");
        }
        // The next question comes as soon as this one is answered: wait for this tool's own.
        const tool = /Offer the MCP tool (\S+) to the model/.exec(text)?.[1];
        assert.ok(tool, text);
        await question
          .locator(".monaco-button", { hasText: /^Accept$/ })
          .click();
        await toast(page, `MCP tool ${tool} to the model`).waitFor({
          state: "detached",
        });
      }
    } catch (error) {
      await failureScreenshot(page, "failure-mcp-definitions.png");
      throw error;
    }
    step("definitions approved");
    assert.equal(asked.length, TOOL_COUNT);
    assert.ok(
      asked.some((text) => text.includes("Read a file of the folder.")),
      asked.join("\n"),
    );

    const call = toast(page, "Counterfoil wants to call the MCP tool");
    try {
      await call.waitFor({ timeout: 60_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-mcp-call.png");
      throw error;
    }
    assert.match(
      await call.innerText(),
      /files\/read \(call-1\) with arguments \{"path":"notes\.txt"\}/,
    );
    const detail = await panel
      .locator(".proposal.state-pending .proposal-detail")
      .innerText();
    assert.match(detail, /"path": "notes\.txt"/);
    await call
      .locator(".monaco-button", { hasText: "Reject with Reason…" })
      .waitFor();
    await screenshot(page, "mcp-call-asked.png");
    await call.locator(".monaco-button", { hasText: /^Accept$/ }).click();
    step("call approved");

    const receipts = receiptsPane(page);
    try {
      await panel.locator("article.turn .verdict").waitFor({ timeout: 60_000 });
      await showCounterfoilView(page);
      await receipts
        .locator(".monaco-list-row", { hasText: "mcp_call files/read" })
        .first()
        .waitFor({ timeout: 30_000 });
    } catch (error) {
      await failureScreenshot(page, "failure-mcp-receipt.png");
      throw error;
    }
    step("call receipted");
    // The definitions are drawn where they were asked, before the call that used the tool,
    // not after the run's last step.
    const order = await panel
      .locator("article.turn")
      .last()
      .locator(".proposal, section.step")
      .evaluateAll((nodes) =>
        nodes.map((node) => {
          const call = (node as HTMLElement).dataset.call ?? "";
          return node.classList.contains("step")
            ? "step"
            : call.startsWith("mcp-definition:")
              ? "definition"
              : call;
        }),
      );
    const said = order.join(" ");
    assert.equal(
      order.filter((kind) => kind === "definition").length,
      TOOL_COUNT,
      said,
    );
    assert.ok(order.lastIndexOf("definition") < order.indexOf("call-1"), said);
    assert.ok(
      order.lastIndexOf("definition") < order.lastIndexOf("step"),
      said,
    );
    await page.mouse.move(10, 10);
    await screenshot(page, "mcp-receipt.png");
    const [receipt] = receiptsOnDisk(workspace).filter(
      (item) => item.tool === "mcp_call",
    );
    assert.equal(receipt?.result, "the notes\n");
  });
});

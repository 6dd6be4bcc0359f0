// What a new file and a protected file say, in a real VS Code against the real daemon: a read
// of .env is refused with the neutral words for the model while the person is told the rule;
// a new file in new folders shows the folders in its diff and Accept creates them.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import {
  editorTitleAction,
  makeWorkspace,
  openFolder,
  receiptsOnDisk,
  runPanel,
  screenshot,
  startBrowser,
  startRun,
  waitForDaemon,
  waitForNotification,
  waitForProposalDiff,
  writeResponses,
} from "./workbench";

let browser: Browser;

describe("new files and protected files", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("a protected .env names its rule to the person; a file in new folders shows and creates them", async () => {
    const script = writeResponses(
      "new-files.jsonl",
      { tool: "read_file", path: ".env" },
      { tool: "write_file", path: "src/pkg/mod.py", content: "x = 1\n" },
      { final: "added src/pkg/mod.py" },
    );
    const workspace = makeWorkspace("new-files", {
      "counterfoil.model": `scripted:${script}`,
    });
    writeFileSync(join(workspace, ".env"), "TOKEN=secret\n");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "add a module");
      const refused = await waitForNotification(page, /refused/);
      assert.match(refused, /\.env is protected by the built-in name \.env/);
      await waitForProposalDiff(page, /write_file src\/pkg\/mod\.py/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "new file in new folders src/, src/pkg/",
        })
        .waitFor();
      await runPanel(page)
        .getByText("Only you see this: .env is protected")
        .waitFor();
      await page.mouse.move(10, 10);
      await screenshot(page, "new-folders-proposal.png");
      await editorTitleAction(page, "Accept").click();
      await waitForNotification(page, /Counterfoil finished/);
      assert.equal(
        readFileSync(join(workspace, "src/pkg/mod.py"), "utf8"),
        "x = 1\n",
      );
      const write = receiptsOnDisk(workspace).find(
        (receipt) => receipt.tool === "write_file",
      )!;
      assert.deepEqual(write.created_folders, ["src", "src/pkg"]);
      assert.ok(existsSync(join(workspace, ".env")));
      await screenshot(page, "new-folders-accepted.png");
    } finally {
      await page.close();
    }
  });
});

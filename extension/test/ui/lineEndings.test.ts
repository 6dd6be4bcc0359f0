// A CRLF file in a real VS Code against the real daemon: a proposal whose new text has a bare
// LF, accepted untouched, writes exactly the proposed bytes and is not recorded as edited; the
// diff's title says what the diff editor cannot show.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
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

describe("line endings in review", () => {
  before(async () => {
    browser = await startBrowser();
  });

  after(async () => {
    await browser?.close();
  });

  test("an untouched proposal with a bare LF in a CRLF file is approved as proposed, not as edited", async () => {
    const script = writeResponses(
      "crlf-edit.jsonl",
      { tool: "read_file", path: "notes.py" },
      {
        tool: "edit_file",
        path: "notes.py",
        old: "x = 1",
        new: "x = 2\nz = 3",
      },
      { final: "changed notes.py" },
    );
    const workspace = makeWorkspace("crlf-untouched", {
      "counterfoil.model": `scripted:${script}`,
    });
    writeFileSync(join(workspace, "notes.py"), "x = 1\r\ny = 1\r\n");
    const page = await openFolder(workspace);
    try {
      await waitForDaemon(page);
      await startRun(page, "change notes.py");
      await waitForProposalDiff(page, /edit_file notes\.py \(call-\d+\)/);
      await page
        .locator(".tabs-container .tab.active", {
          hasText: "1 changed line ends in LF in a CRLF file (line 1)",
        })
        .waitFor();
      await screenshot(page, "crlf-proposal.png");
      await editorTitleAction(page, "Accept").click();
      await waitForNotification(page, /Counterfoil finished/);
      assert.equal(
        readFileSync(join(workspace, "notes.py"), "utf8"),
        "x = 2\nz = 3\r\ny = 1\r\n",
        "the proposed bytes, line endings and all",
      );
      const edit = receiptsOnDisk(workspace).find(
        (receipt) => receipt.tool === "edit_file",
      )!;
      assert.equal(edit.exit_state, "ok");
      const approval = edit.approval;
      assert.equal(approval?.modified, false, JSON.stringify(approval));
      assert.equal(
        await runPanel(page)
          .getByText(/with your changes/)
          .count(),
        0,
      );
      await screenshot(page, "crlf-accepted.png");
    } finally {
      await page.close();
    }
  });
});

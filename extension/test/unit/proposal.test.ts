import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type {
  CommandPreview,
  ConfirmParams,
  EditPreview,
} from "../../src/daemon/protocol";
import {
  ProposalError,
  baseMismatch,
  commandDetail,
  diffTitle,
  proposalSubject,
  proposedFileText,
} from "../../src/review/proposal";

const base: EditPreview = {
  kind: "edit",
  path: "app.py",
  uri: "file:///work/demo/app.py",
  removesFile: false,
  baseSha256: "aa",
  proposedSha256: "bb",
  proposedText: null,
  baseText: "x = 1\n",
  edit: null,
};

describe("proposedFileText", () => {
  test("the preview's proposedText is shown as it is", () => {
    assert.equal(
      proposedFileText({ ...base, proposedText: "x = 2\n" }),
      "x = 2\n",
    );
  });

  test("a preview without a proposed text is refused", () => {
    assert.throws(() => proposedFileText(base), ProposalError);
  });
});

describe("baseMismatch", () => {
  test("the file on disk must have the digest the model read", () => {
    assert.equal(baseMismatch(base, "aa"), undefined);
    assert.match(baseMismatch(base, "cc") ?? "", /changed on disk/);
    assert.match(baseMismatch(base, null) ?? "", /was removed/);
  });

  test("a new file must still not exist", () => {
    const create = { ...base, baseSha256: null };
    assert.equal(baseMismatch(create, null), undefined);
    assert.match(baseMismatch(create, "aa") ?? "", /exists now/);
  });
});

describe("approval words", () => {
  const edit: EditPreview = { ...base, proposedText: "2" };
  const command: CommandPreview = {
    kind: "command",
    argv: ["python", "-m", "pytest", "tests/test_math.py", "-q"],
    cwd: "/work/demo",
    timeoutSeconds: 30,
  };

  test("the diff title names the tool, the path and the call id", () => {
    const params: ConfirmParams = {
      toolCallId: "call-1",
      tool: "edit_file",
      arguments: {},
      preview: edit,
    };
    assert.equal(
      diffTitle(params, edit),
      "edit_file app.py (call-1): as read ↔ proposed",
    );
    assert.equal(
      diffTitle(params, { ...edit, baseSha256: null }),
      "edit_file app.py (call-1): new file ↔ proposed",
    );
    assert.equal(
      diffTitle(params, {
        ...edit,
        baseSha256: null,
        newFolders: ["src", "src/pkg"],
      }),
      "edit_file app.py (call-1): new file in new folders src/, src/pkg/ ↔ proposed",
    );
    assert.equal(proposalSubject(params), "edit_file app.py");
  });

  test("the command modal shows the exact argv as JSON and the cwd", () => {
    const detail = commandDetail(command);
    assert.match(
      detail,
      /^argv: \["python","-m","pytest","tests\/test_math.py","-q"\]$/m,
    );
    assert.match(detail, /^cwd: \/work\/demo$/m);
    assert.match(detail, /^timeout: 30 s$/m);
  });
});

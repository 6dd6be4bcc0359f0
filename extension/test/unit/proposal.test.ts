import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type {
  CommandPreview,
  ConfirmParams,
  EditPreview,
  WorkspaceEdit,
} from "../../src/protocol";
import {
  ProposalError,
  applyTextEdits,
  commandDetail,
  diffTitle,
  offsetAt,
  proposalSubject,
  proposedText,
  readEditProposal,
} from "../../src/proposal";

const APP = "file:///work/demo/app.py";

function replaceWhole(
  uri: string,
  lines: number,
  newText: string,
): WorkspaceEdit {
  return {
    documentChanges: [
      {
        textDocument: { uri, version: null },
        edits: [
          {
            range: {
              start: { line: 0, character: 0 },
              end: { line: lines, character: 0 },
            },
            newText,
          },
        ],
      },
    ],
  };
}

describe("readEditProposal", () => {
  test("an existing file's edit is one full-document text edit", () => {
    const proposal = readEditProposal(
      replaceWhole(APP, 2, "def add(a, b):\n    return a + b + 2\n"),
    );
    assert.equal(proposal.targetUri, APP);
    assert.equal(proposal.createsFile, false);
    assert.equal(proposal.edits.length, 1);
  });

  test("a CreateFile before the text edit marks a new file", () => {
    const edit: WorkspaceEdit = {
      documentChanges: [
        {
          kind: "create",
          uri: "file:///work/demo/new.py",
          options: { overwrite: false, ignoreIfExists: false },
        },
        {
          textDocument: { uri: "file:///work/demo/new.py", version: null },
          edits: [
            {
              range: {
                start: { line: 0, character: 0 },
                end: { line: 0, character: 0 },
              },
              newText: "x = 1\n",
            },
          ],
        },
      ],
    };
    const proposal = readEditProposal(edit);
    assert.equal(proposal.createsFile, true);
    assert.equal(proposedText(proposal, "ignored base"), "x = 1\n");
  });

  test("an edit that touches two files is refused", () => {
    const edit: WorkspaceEdit = {
      documentChanges: [
        ...replaceWhole(APP, 1, "a").documentChanges!,
        ...replaceWhole("file:///work/demo/b.py", 1, "b").documentChanges!,
      ],
    };
    assert.throws(() => readEditProposal(edit), ProposalError);
  });

  test("an edit that names no file is refused", () => {
    assert.throws(
      () => readEditProposal({ documentChanges: [] }),
      /changes no file/,
    );
  });

  test("unknown resource operations are refused rather than ignored", () => {
    assert.throws(
      () =>
        readEditProposal({
          documentChanges: [{ kind: "delete", uri: APP } as never],
        }),
      /unsupported change/,
    );
  });

  test("the plain `changes` map is understood too", () => {
    const proposal = readEditProposal({
      changes: {
        [APP]: [
          {
            range: {
              start: { line: 0, character: 0 },
              end: { line: 0, character: 1 },
            },
            newText: "2",
          },
        ],
      },
    });
    assert.equal(proposedText(proposal, "1\n"), "2\n");
  });
});

describe("proposedText", () => {
  test("a full-document replacement yields exactly the new text whatever the base", () => {
    const base = "def add(a, b):\n    return a + b + 1\n";
    const text = "def add(a, b):\n    return a + b + 2\n";
    assert.equal(
      proposedText(readEditProposal(replaceWhole(APP, 2, text)), base),
      text,
    );
  });

  test("an end position past the last line is clamped to the end of the text", () => {
    assert.equal(
      proposedText(
        readEditProposal(replaceWhole(APP, 99, "new\n")),
        "old\nlines",
      ),
      "new\n",
    );
  });
});

describe("applyTextEdits", () => {
  test("edits apply against the original positions, in any order", () => {
    const text = "alpha\nbeta\ngamma\n";
    const result = applyTextEdits(text, [
      {
        range: {
          start: { line: 2, character: 0 },
          end: { line: 2, character: 5 },
        },
        newText: "GAMMA",
      },
      {
        range: {
          start: { line: 0, character: 0 },
          end: { line: 0, character: 5 },
        },
        newText: "A",
      },
    ]);
    assert.equal(result, "A\nbeta\nGAMMA\n");
  });

  test("overlapping edits are refused", () => {
    assert.throws(
      () =>
        applyTextEdits("abcdef", [
          {
            range: {
              start: { line: 0, character: 0 },
              end: { line: 0, character: 4 },
            },
            newText: "x",
          },
          {
            range: {
              start: { line: 0, character: 2 },
              end: { line: 0, character: 5 },
            },
            newText: "y",
          },
        ]),
      /overlap/,
    );
  });

  test("characters are UTF-16 code units, as in LSP", () => {
    // "é" is one unit, "😀" two.
    assert.equal(offsetAt("é😀x\n", { line: 0, character: 3 }), 3);
    assert.equal(
      applyTextEdits("é😀x\n", [
        {
          range: {
            start: { line: 0, character: 3 },
            end: { line: 0, character: 4 },
          },
          newText: "y",
        },
      ]),
      "é😀y\n",
    );
  });

  test("a character past the end of a line stops at the line's end, before CRLF", () => {
    assert.equal(offsetAt("ab\r\ncd", { line: 0, character: 10 }), 2);
  });
});

describe("approval words", () => {
  const edit: EditPreview = {
    kind: "edit",
    path: "app.py",
    edit: replaceWhole(APP, 1, "2"),
    baseSha256: "aa",
    proposedSha256: "bb",
  };
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
      "edit_file app.py (call-1): current ↔ proposed",
    );
    assert.equal(
      diffTitle(params, { ...edit, baseSha256: null }),
      "edit_file app.py (call-1): new file ↔ proposed",
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

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type {
  ChangeSetPreview,
  CommandPreview,
  ConfirmParams,
  EditPreview,
} from "../../src/daemon/protocol";
import {
  ProposalError,
  baseMismatch,
  changeSetQuestion,
  changeSetTitle,
  changeSideText,
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

  test("the command modal says how the command will run before it runs", () => {
    const review = commandDetail({
      ...command,
      runsAs: { mode: "review", mechanism: "bubblewrap", network: false },
    });
    assert.match(
      review,
      /^Runs in review mode: on a copy of the root \(bubblewrap\), no network; its changes come back for your review/m,
    );
    const confined = commandDetail({
      ...command,
      runsAs: { mode: "confine", mechanism: "bubblewrap", network: true },
    });
    assert.match(
      confined,
      /^Runs confined \(bubblewrap\): .*with the network/m,
    );
    const off = commandDetail({
      ...command,
      runsAs: { mode: "off", mechanism: "none", network: true },
    });
    assert.match(off, /^Runs unconfined: /m);
  });

  test("an argv that starts a shell is never said to run without one", () => {
    assert.match(
      commandDetail({
        ...command,
        argv: ["/bin/sh", "-c", "make test && make lint"],
      }),
      /^Starts the shell sh, which runs the text after -c as shell code/m,
    );
    assert.match(commandDetail(command), /^Runs without a shell; /m);
  });

  test("a shell started through env, or with -c in a cluster of options, is said to run shell code", () => {
    for (const argv of [
      ["env", "sh", "-c", "make test"],
      ["/usr/bin/env", "-i", "FOO=1", "bash", "-lc", "make test"],
      ["dash", "-e", "-c", "make test"],
      ["zsh", "-ec", "make test"],
    ]) {
      assert.match(
        commandDetail({ ...command, argv }),
        /^Starts the shell (sh|bash|dash|zsh), which runs the text after -c as shell code/m,
        argv.join(" "),
      );
    }
  });

  test("a shell given a script is said to start that shell, not to run without one", () => {
    const detail = commandDetail({ ...command, argv: ["bash", "build.sh"] });
    assert.match(
      detail,
      /^Starts the shell bash, which runs the script it is given/m,
    );
    assert.doesNotMatch(detail, /without a shell/);
  });

  test("a program that only takes -c itself runs without a shell", () => {
    assert.match(
      commandDetail({ ...command, argv: ["python3", "-c", "print(1)"] }),
      /^Runs without a shell; /m,
    );
  });
});

const reviewed: ChangeSetPreview = {
  kind: "changes",
  reverts: null,
  files: [
    {
      path: "data.txt",
      uri: "file:///work/demo/data.txt",
      expectedSha256: "aa",
      contentSha256: "bb",
      removesFile: false,
      currentText: "before\n",
      proposedText: "after\n",
      mode: 0o644,
      currentMode: 0o644,
      changesMode: false,
    },
    {
      path: "gen/out.bin",
      uri: "file:///work/demo/gen/out.bin",
      expectedSha256: null,
      contentSha256: "cc",
      removesFile: false,
      currentText: null,
      proposedText: null,
      mode: 0o644,
      currentMode: null,
      changesMode: false,
    },
  ],
  leftAlone: [{ path: "notes.txt", why: "changed since the command" }],
  ran: {
    argv: ["python", "tool.py"],
    exitStatus: 0,
    timedOut: false,
    mode: "review",
    mechanism: "bubblewrap",
    network: false,
  },
};
const reviewParams: ConfirmParams = {
  toolCallId: "call-1",
  tool: "review",
  arguments: { argv: ["python", "tool.py"] },
  preview: reviewed,
};

describe("change sets", () => {
  test("a reviewed command's diff is titled with its argv, the question says how it ran", () => {
    assert.equal(
      changeSetTitle(reviewParams, reviewed),
      "Review python tool.py (call-1): root ↔ the command's changes",
    );
    assert.equal(
      changeSetQuestion(reviewParams, reviewed),
      "Apply the changes of python tool.py (exit status 0, in a copy of the root (bubblewrap), no network) to the root: 2 files, all or nothing (call-1). Left alone: notes.txt (changed since the command).",
    );
    assert.equal(
      proposalSubject(reviewParams),
      "review python tool.py (2 files)",
    );
  });

  test("a command's revert is titled with the call it undoes", () => {
    const revert = { ...reviewed, reverts: "call-1", ran: null, leftAlone: [] };
    const params = {
      ...reviewParams,
      toolCallId: "call-3",
      tool: "revert",
      preview: revert,
    };
    assert.equal(
      changeSetTitle(params, revert),
      "Revert call-1 (call-3): now ↔ restored",
    );
    assert.equal(
      changeSetQuestion(params, revert),
      "Revert call-1: 2 files, each only if unchanged since the command (call-3).",
    );
  });

  test("every change of a file's mode is said, with the bits not to miss named", () => {
    const [text, binary] = reviewed.files;
    const modes = {
      ...reviewed,
      files: [
        { ...text, mode: 0o4777, changesMode: true },
        { ...binary, mode: 0o755, changesMode: true },
      ],
      leftAlone: [],
    };
    assert.equal(
      changeSetQuestion(reviewParams, modes),
      "Apply the changes of python tool.py (exit status 0, in a copy of the root (bubblewrap), no network) to the root: 2 files, all or nothing (call-1). Modes: data.txt 0644 → 4777 (setuid, world-writable), gen/out.bin new file → 0755.",
    );
  });

  test("a revert says which folders the command made are removed first", () => {
    const [text] = reviewed.files;
    const revert = {
      ...reviewed,
      reverts: "call-1",
      ran: null,
      leftAlone: [],
      files: [{ ...text, path: "out", madeFolders: ["out/sub", "out"] }],
    };
    const params = { ...reviewParams, tool: "revert", preview: revert };
    assert.equal(
      changeSetQuestion(params, revert),
      "Revert call-1: 1 file, each only if unchanged since the command (call-1). Removes the folders the command made, when empty: out/sub/, out/.",
    );
  });

  test("a newline or an escape in a path cannot start a line of its own", () => {
    const forged = {
      ...reviewed,
      leftAlone: [
        { path: "a\nLeft alone: deploy.sh\r\u001b[2K", why: "protected" },
      ],
    };
    const question = changeSetQuestion(reviewParams, forged);
    assert.ok(!/[\n\r\u001b]/.test(question));
    assert.match(
      question,
      /a\\x0aLeft alone: deploy\.sh\\x0d\\x1b\[2K \(protected\)/,
    );
  });

  test("an absent side is empty and unreadable bytes are said, not shown", () => {
    const [text, binary] = reviewed.files;
    assert.equal(changeSideText(text, "now"), "before\n");
    assert.equal(changeSideText(binary, "now"), "");
    assert.equal(
      changeSideText(binary, "after"),
      "(binary or not UTF-8: not shown)\n",
    );
  });
});

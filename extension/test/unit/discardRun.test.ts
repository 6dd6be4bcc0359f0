import assert from "node:assert/strict";
import { test } from "node:test";
import type { DiscardResult } from "../../src/daemon/protocol";
import { discardedNotice, discardQuestion } from "../../src/run/discardRun";

const DISCARDED: DiscardResult = {
  runId: "run-1",
  goal: "make double() double\nand test it",
  pending: "edit_file app.py",
  filesChanged: [
    { path: "app.py", toolCallId: "call-1", tool: "edit_file", sha256: "ab" },
    { path: "app.py", toolCallId: "call-3", tool: "edit_file", sha256: "cd" },
    {
      path: "test_app.py",
      toolCallId: "call-2",
      tool: "write_file",
      sha256: "ef",
    },
  ],
};

test("the question says the run goes and the files it changed stay", () => {
  const question = discardQuestion("make double() double", 2);

  assert.equal(question.message, 'Discard the run "make double() double"?');
  assert.match(question.detail, /will not be offered to resume again/);
  assert.match(question.detail, /The 2 files it changed stay as they are/);
});

test("the question for a run that changed nothing says so", () => {
  assert.match(
    discardQuestion("look around", 0).detail,
    /It changed no files\./,
  );
});

test("the notice names the unasked proposal and each kept file once", () => {
  assert.equal(
    discardedNotice(DISCARDED),
    'Counterfoil: discarded the run "make double() double". Its open proposal ' +
      "(edit_file app.py) will not be asked. Kept as they are: app.py, test_app.py.",
  );
});

test("the notice of a run with nothing open and nothing written says so", () => {
  assert.equal(
    discardedNotice({ ...DISCARDED, pending: null, filesChanged: [] }),
    'Counterfoil: discarded the run "make double() double". It changed no files.',
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { lateButtonNotice } from "../../src/review/lateAnswer";

test("Accept pressed on a review already answered says what the answer was", () => {
  assert.equal(
    lateButtonNotice(
      "Accept",
      "run_command make (2 files)",
      "call-4",
      "rejected",
    ),
    "Counterfoil: Accept did nothing: run_command make (2 files) (call-4) was already rejected.",
  );
});

test("Re-propose pressed after Stop says the run stopped and Resume asks again", () => {
  assert.equal(
    lateButtonNotice("Re-propose", "edit_file app.py", "call-2", "interrupted"),
    "Counterfoil: Re-propose did nothing: edit_file app.py (call-2) is no longer asked: the run stopped or paused before it was answered (Resume asks again).",
  );
});

test("a button whose proposal left no outcome still says it did nothing", () => {
  assert.match(
    lateButtonNotice("Reject", "edit_file a.py", "call-1", undefined),
    /Reject did nothing: .* is no longer waiting for an answer\.$/,
  );
});

test("a button of a question the daemon asked again says it is pending again", () => {
  assert.equal(
    lateButtonNotice("Accept", "run_command true", "call-1", "asked again"),
    "Counterfoil: Accept did nothing: run_command true (call-1) was withdrawn and is pending again: answer its new question.",
  );
});

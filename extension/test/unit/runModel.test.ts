import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunResult } from "../../src/protocol";
import {
  addEvent,
  addModelText,
  emptyModel,
  finishTurn,
  setProposal,
  setStopping,
  splitThinking,
  startTurn,
  verdictLines,
} from "../../src/runModel";
import { verifyReport } from "../../src/verifyReport";

test("thinking is split from the text the model shows", () => {
  assert.deepEqual(splitThinking('<think>hmm</think>\n{"final":"x"}'), {
    thinking: "hmm",
    text: '{"final":"x"}',
  });
  assert.deepEqual(splitThinking("plain"), { thinking: "", text: "plain" });
});

test("the daemon's runStarted joins the turn the extension opened; streamed text accumulates", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  startTurn(model, "fix it", "run-1");
  assert.equal(model.turns.length, 1);
  assert.equal(model.turns[0].runId, "run-1");
  addModelText(model, 1, "plan", true);
  addModelText(model, 1, '{"tool":');
  addModelText(model, 1, '"read_file"}');
  assert.deepEqual(model.turns[0].streaming, {
    step: 1,
    thinking: "plan",
    text: '{"tool":"read_file"}',
  });
  addEvent(model, {
    step: 1,
    response: '{"tool":"read_file","path":"app.py"}',
    action: { tool: "read_file", arguments: { path: "app.py" } },
    result: "line 1\nline 2",
    outcome: "ok",
  });
  assert.equal(model.turns[0].streaming, null);
  assert.equal(model.turns[0].steps[0].action, "read_file app.py");
});

test("a model server's remark on a response stays with its step", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  addEvent(model, {
    step: 1,
    response: "not an action",
    action: null,
    result: "error: response is not a JSON object",
    outcome: null,
    modelNote: "this server does not enforce the schema",
  });
  addEvent(model, {
    step: 2,
    response: '{"tool":"read_file","path":"app.py"}',
    action: { tool: "read_file", arguments: { path: "app.py" } },
    result: "x = 1",
    outcome: "ok",
  });
  assert.equal(
    model.turns[0].steps[0].modelNote,
    "this server does not enforce the schema",
  );
  assert.equal(model.turns[0].steps[1].modelNote, null);
});

test("a failed effect marks its proposal failed; stopping shows until the result", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  setProposal(model, {
    toolCallId: "call-1",
    subject: "edit_file app.py",
    kind: "edit",
    state: "accepted",
  });
  addEvent(model, {
    step: 1,
    response: "{}",
    action: { tool: "edit_file", arguments: { path: "app.py" } },
    result: "error: file changed since it was read",
    outcome: "failed",
    toolCallId: "call-1",
  });
  assert.equal(model.proposals["call-1"].state, "failed");
  assert.equal(
    model.proposals["call-1"].reason,
    "error: file changed since it was read",
  );
  setStopping(model);
  assert.equal(model.turns[0].status, "stopping");
});

test("after a run that rejects everything the verdict says so and the final answer is only a claim", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  const result: RunResult = {
    completed: true,
    reason: "completed",
    final: "changed and validated app.py",
    modifiedFiles: [],
    events: [],
    verdict: {
      succeeded: false,
      approved: [],
      rejected: ["call-1", "call-2"],
      refused: [],
      failed: [],
      filesChanged: [],
      validation: "not_run",
    },
    modelUsage:
      "2 responses, 900 prompt tokens (450 from the cache), 20 generated",
  };
  finishTurn(model, result);
  assert.deepEqual(verdictLines(model.turns[0]), [
    "Validation not run",
    "No files changed",
    "2 effects rejected",
  ]);
  assert.equal(model.turns[0].final, "changed and validated app.py");
  assert.equal(
    model.turns[0].modelUsage,
    "2 responses, 900 prompt tokens (450 from the cache), 20 generated",
  );
  assert.ok(
    !verdictLines(model.turns[0]).some((line) => line.includes("responses")),
    "the model's usage is not a verdict line",
  );
});

test("a cancelled run is stopped and says why", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  finishTurn(model, {
    completed: false,
    reason: "cancelled",
    final: null,
    modifiedFiles: [],
    events: [],
  });
  assert.equal(model.turns[0].status, "stopped");
  assert.equal(verdictLines(model.turns[0])[0], "Run stopped: cancelled");
});

test("verify reports the chain and the files in separate words", () => {
  assert.equal(
    verifyReport({ ok: true, count: 3, error: null, chainOk: true, drift: [] }),
    "The receipt chain is intact (3 receipts, none altered or removed); every file the agent wrote still has the bytes it wrote.",
  );
  assert.equal(
    verifyReport({
      ok: false,
      count: 3,
      error: "files changed after their receipts",
      chainOk: true,
      drift: ["app.py changed after call-1"],
    }),
    "The receipt chain is intact (3 receipts, none altered or removed); files no longer what the agent wrote: app.py changed after call-1.",
  );
  assert.equal(
    verifyReport({
      ok: false,
      count: 2,
      error: "line 3: receipt digest does not match its contents",
      line: 3,
    }),
    "The receipt chain is broken: line 3: receipt digest does not match its contents; the 2 receipts before line 3 are intact; files were not checked.",
  );
});

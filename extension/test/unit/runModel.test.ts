import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunResult } from "../../src/daemon/protocol";
import {
  addActivity,
  endTurns,
  addEvent,
  addModelText,
  emptyModel,
  finishTurn,
  lookingLine,
  setApprovalState,
  setProposal,
  setStopping,
  splitThinking,
  startTurn,
  untiedAt,
  verdictLines,
} from "../../src/run/runModel";
import { verifyReport } from "../../src/receipts/verifyReport";

test("thinking is split from the text the model shows", () => {
  assert.deepEqual(splitThinking('<think>hmm</think>\n{"final":"x"}'), {
    thinking: "hmm",
    text: '{"final":"x"}',
  });
  assert.deepEqual(splitThinking("plain"), { thinking: "", text: "plain" });
});

const NO_CALL = {
  toolCallId: null,
  state: null,
  receiptId: null,
  outputSha256: null,
  resultSha256: null,
  reason: null,
  effect: null,
  runId: "run-1",
  modelNote: null,
  protectedBy: null,
  enabledBy: null,
} as const;

test("the daemon's runStarted gives its run id to the turn the extension opened; streamed text accumulates", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  startTurn(model, "fix it (as the daemon echoes it)", "run-1");
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
    ...NO_CALL,
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
    ...NO_CALL,
    modelNote: "this server does not enforce the schema",
  });
  addEvent(model, {
    step: 2,
    response: '{"tool":"read_file","path":"app.py"}',
    action: { tool: "read_file", arguments: { path: "app.py" } },
    result: "x = 1",
    ...NO_CALL,
  });
  assert.equal(
    model.turns[0].steps[0].modelNote,
    "this server does not enforce the schema",
  );
  assert.equal(model.turns[0].steps[1].modelNote, null);
});

test("a listed path that does not exist keeps the daemon's words for the person on its step", () => {
  const model = emptyModel();
  startTurn(model, "list nowhere");
  addEvent(model, {
    step: 1,
    response: '{"tool":"list_files","path":"nowhere"}',
    action: { tool: "list_files", arguments: { path: "nowhere" } },
    result: "error: path is not accessible",
    ...NO_CALL,
    state: "refused",
    reason: "no such path: nowhere",
  });
  assert.equal(
    model.turns[0].steps[0].refusalNote,
    "no such path: nowhere; the model was told only: error: path is not accessible",
  );
});

test("a final answer the daemon did not take as the end shows the model's words and what it was told, and the run goes on", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  const told =
    "Not ended yet: your answer says the task is done.\nThe task: fix it";
  addEvent(model, {
    step: 3,
    response: '{"final":"done, the test passed"}',
    action: { final: "done, the test passed" },
    result: null,
    ...NO_CALL,
    finalHeld: told,
  });
  const [step] = model.turns[0].steps;
  assert.equal(step.action, "final answer, not taken as the end");
  assert.equal(step.text, "done, the test passed");
  assert.equal(step.observation, told);
  assert.equal(model.turns[0].status, "running");
  assert.equal(model.turns[0].final, undefined);

  addEvent(model, {
    step: 4,
    response: '{"final":"done"}',
    action: { final: "done" },
    result: null,
    ...NO_CALL,
  });
  assert.equal(model.turns[0].steps[1].action, "final answer");
  assert.equal(
    model.turns[0].steps[1].text,
    "",
    "the turn shows it as its claim",
  );
  assert.equal(model.turns[0].steps[1].observation, null);
});

test("a final answer taken without the check says why, on its step and under the claim", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  const why = "not checked: a change was rejected in this run";
  addEvent(model, {
    step: 2,
    response: '{"final":"done"}',
    action: { final: "done" },
    result: null,
    ...NO_CALL,
    finalUnchecked: why,
  });
  const [step] = model.turns[0].steps;
  assert.equal(step.action, "final answer, not checked against the record");
  assert.equal(step.observation, why);
  assert.equal(model.turns[0].finalUnchecked, why);
});

test("a failed effect marks its proposal failed; stopping shows until the result", () => {
  const model = emptyModel();
  startTurn(model, "fix it");
  setProposal(model, {
    toolCallId: "call-1",
    subject: "edit_file app.py",
    kind: "edit",
    state: "approved",
  });
  addEvent(model, {
    step: 1,
    response: "{}",
    action: { tool: "edit_file", arguments: { path: "app.py" } },
    result: "error: file changed since it was read",
    ...NO_CALL,
    toolCallId: "call-1",
    state: "failed",
    reason: "file changed since it was read",
  });
  assert.equal(model.proposals["call-1"].state, "failed");
  assert.equal(model.turns[0].steps[0].stateWords, "failed");
  assert.equal(model.turns[0].steps[0].wentWrong, true);
  assert.equal(
    model.proposals["call-1"].reason,
    "file changed since it was read",
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
    error: null,
    runId: "run-1",
    verdict: {
      succeeded: false,
      approved: [],
      rejected: ["call-1", "call-2"],
      refused: [],
      failed: [],
      reviewRejected: [],
      filesChanged: [],
      validation: "not_run",
      validatedBy: null,
      effects: [],
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
    error: null,
    runId: "run-1",
    verdict: {
      succeeded: false,
      approved: [],
      rejected: [],
      refused: [],
      failed: [],
      reviewRejected: [],
      filesChanged: [],
      validation: "not_run",
      validatedBy: null,
      effects: [],
    },
  });
  assert.equal(model.turns[0].status, "stopped");
  assert.equal(verdictLines(model.turns[0])[0], "Run stopped: cancelled");
});

test("a command that ran and exited non-zero is approved, shown with its exit status, and went wrong", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  addEvent(model, {
    step: 1,
    response: "{}",
    action: { tool: "run_command", arguments: { argv: ["pytest"] } },
    result: "status: 1\noutput:\nFAILED",
    ...NO_CALL,
    toolCallId: "call-2",
    state: "approved",
    effect: {
      toolCallId: "call-2",
      tool: "run_command",
      state: "approved",
      path: null,
      argv: ["pytest"],
      sha256: null,
      exitStatus: 1,
      timedOut: false,
      reason: null,
    },
  });
  const [step] = model.turns[0].steps;
  assert.equal(step.stateWords, "approved, exit status 1");
  assert.equal(step.wentWrong, true);
});

test("events and results go to the turn of their run id, not to the latest turn", () => {
  const model = emptyModel();
  startTurn(model, "first", "run-1");
  startTurn(model, "second", "run-2");
  addEvent(model, {
    step: 1,
    response: "{}",
    action: null,
    result: "x",
    ...NO_CALL,
  });
  assert.equal(model.turns[0].steps.length, 1);
  assert.equal(model.turns[1].steps.length, 0);
});

test("verify reports the chain and the files in separate words", () => {
  assert.equal(
    verifyReport({
      ok: true,
      count: 3,
      error: null,
      line: null,
      chainOk: true,
      chainError: null,
      drift: [],
    }),
    "The receipt chain is intact (3 receipts, none altered or removed); every file the agent wrote still has the bytes it wrote.",
  );
  assert.equal(
    verifyReport({
      ok: false,
      count: 3,
      error: "files changed after their receipts",
      line: null,
      chainOk: true,
      chainError: null,
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
      chainOk: false,
      chainError: "line 3: receipt digest does not match its contents",
      drift: null,
    }),
    "The receipt chain is broken: line 3: receipt digest does not match its contents; the 2 receipts before line 3 are intact; files were not checked.",
  );
});

test("a turn keeps what the model's loading did and shows what its step is doing now", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  const activity = (step: number | null, message: string) =>
    addActivity(model, {
      runId: "run-1",
      phase: step === null ? "loading" : "prefill",
      step,
      message,
    });
  activity(null, "loading m.gguf");
  activity(null, "importing m.gguf into /cache/ab12");
  activity(1, "prefill 355/457 tokens");
  activity(1, "prefill 457 tokens; generated 30 tokens");

  assert.deepEqual(model.turns[0].loading, [
    "loading m.gguf",
    "importing m.gguf into /cache/ab12",
  ]);
  assert.deepEqual(model.turns[0].activity, {
    step: 1,
    message: "prefill 457 tokens; generated 30 tokens",
  });
});

test("a paused turn whose run ended elsewhere offers nothing to resume", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  model.turns[0].status = "paused";

  assert.equal(endTurns(model, new Set(["run-2"])), false);
  assert.equal(endTurns(model, new Set(["run-1"])), true);

  assert.equal(model.turns[0].status, "ended");
  assert.match(verdictLines(model.turns[0])[0], /nothing to resume/);
});

test("a question the daemon withdrew and asks again shows the daemon's state, pending again in the going turn", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  setProposal(model, {
    toolCallId: "call-1",
    subject: "run_command true",
    kind: "command",
    state: "pending",
  });
  const why = "withdrawn for a pause before it was answered";
  setApprovalState(model, {
    runId: "run-1",
    toolCallId: "call-1",
    state: "withdrawn",
    why,
  });
  assert.equal(model.proposals["call-1"].state, "withdrawn");
  assert.equal(model.proposals["call-1"].reason, why);
  finishTurn(model, {
    completed: false,
    reason: "paused",
    final: null,
    modifiedFiles: [],
    verdict: null,
    runId: "run-1",
  } as unknown as RunResult);
  assert.equal(model.proposals["call-1"].reason, why);
  startTurn(model, "fix it"); // Resume opens a turn; the daemon's runStarted names it
  startTurn(model, "fix it", "run-1", false, null, true, "keep it short");
  setApprovalState(model, {
    runId: "run-1",
    toolCallId: "call-1",
    state: "pending",
    why: null,
  });
  assert.equal(model.proposals["call-1"].state, "pending");
  assert.equal(model.proposals["call-1"].turn, 1);
});

test("an MCP tool's definition is drawn where it was asked, not after the run's last step", () => {
  const model = emptyModel();
  startTurn(model, "use the tool", "run-1");
  const step = (n: number, toolCallId: string | null) => ({
    step: n,
    response: "{}",
    action: { tool: "read_file", arguments: { path: "app.py" } },
    result: "ok",
    ...NO_CALL,
    toolCallId,
    state: null,
  });
  addEvent(model, step(1, null));
  setProposal(model, {
    toolCallId: "mcp-definition-1",
    subject: "MCP tool notes.add",
    kind: "mcp_definition",
    state: "pending",
  });
  addEvent(model, step(2, "call-2"));
  addEvent(model, step(3, null));
  const turn = model.turns[0];

  const drawn = [0, 1, 2, 3].map((position) =>
    untiedAt(turn, 0, model.proposals, position).map(
      (proposal) => proposal.toolCallId,
    ),
  );

  assert.deepEqual(drawn, [[], ["mcp-definition-1"], [], []]);
});

test("an empty panel says it is looking for a run to resume until a run or an offer replaces it", () => {
  const model = emptyModel();
  const looking = "Looking for a paused or interrupted run to resume…";

  assert.equal(lookingLine(model, looking), looking);
  assert.equal(lookingLine(model, null), null);
  startTurn(model, "fix it");
  assert.equal(lookingLine(model, looking), null);
});

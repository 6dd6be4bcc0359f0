import assert from "node:assert/strict";
import { test } from "node:test";
import type {
  AgentEvent,
  RunResult,
  SessionInfo,
} from "../../src/daemon/protocol";
import {
  latestResumable,
  resumableLines,
  resumableView,
} from "../../src/run/resumable";
import {
  addEvent,
  emptyModel,
  finishTurn,
  interruptTurn,
  setProposal,
  startTurn,
  verdictLines,
} from "../../src/run/runModel";

const KILLED: SessionInfo = {
  runId: "run-1",
  state: "interrupted",
  goal: "make double() double",
  steps: 3,
  lastAction: '{"path":"app.py","tool":"edit_file"}',
  updatedAt: "2026-01-01T00:00:00+00:00",
  pending: {
    toolCallId: "call-2",
    tool: "edit_file",
    arguments: { path: "app.py", old: "a", new: "b" },
  },
  filesChanged: [
    { path: "app.py", toolCallId: "call-1", tool: "edit_file", sha256: "ab" },
  ],
  problem: null,
};

test("a run killed with an approval open says what its receipts show and that nothing was rejected", () => {
  const lines = resumableLines(resumableView(KILLED, true));

  assert.deepEqual(lines, [
    "Run interrupted: the daemon stopped before the run ended. Nothing was rejected.",
    "Written: app.py by call-1 (edit_file), as its receipt shows.",
    "Waiting for your answer when it stopped: call-2 edit_file app.py. Resume asks again, as a fresh diff against the file as it is now.",
  ]);
});

test("the latest run that can go on is offered, never an ended or discarded one", () => {
  const ended: SessionInfo = { ...KILLED, runId: "run-0", state: "ended" };
  const paused: SessionInfo = { ...KILLED, runId: "run-2", state: "paused" };

  assert.equal(
    latestResumable([KILLED, paused, ended], new Set())?.runId,
    "run-2",
  );
  assert.equal(
    latestResumable([KILLED, paused], new Set(["run-2"]))?.runId,
    "run-1",
  );
  assert.equal(latestResumable([ended], new Set()), undefined);
});

test("a crash interrupts the turn and its open proposal instead of rejecting them", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  setProposal(model, {
    toolCallId: "call-2",
    subject: "edit_file app.py",
    kind: "edit",
    state: "pending",
  });

  interruptTurn(model);

  assert.equal(model.turns[0].status, "interrupted");
  assert.equal(model.proposals["call-2"].state, "interrupted");
  assert.deepEqual(verdictLines(model.turns[0]), [
    "Run interrupted: the daemon stopped before the run ended. Nothing was rejected.",
  ]);
});

test("a paused run's waiting proposal reads withdrawn, not rejected", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  setProposal(model, {
    toolCallId: "call-1",
    subject: "run_command slow",
    kind: "command",
    state: "interrupted",
    reason: "withdrawn by the daemon; nothing was answered",
  });
  const result = {
    completed: false,
    reason: "paused",
    final: null,
    modifiedFiles: [],
    error: null,
    runId: "run-1",
    verdict: null,
  } as unknown as RunResult;

  finishTurn(model, result);

  assert.equal(model.turns[0].status, "paused");
  assert.equal(model.proposals["call-1"].state, "withdrawn");
  assert.deepEqual(verdictLines(model.turns[0]), [
    "Run paused at a boundary. Nothing was rejected: the proposal waiting for your answer was withdrawn, and Resume asks it again.",
  ]);
});

test("a run paused with no proposal waiting says nothing of one", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  finishTurn(model, {
    completed: false,
    reason: "paused",
    final: null,
    modifiedFiles: [],
    error: null,
    runId: "run-1",
    verdict: null,
  } as unknown as RunResult);

  assert.deepEqual(verdictLines(model.turns[0]), [
    "Run paused at a boundary. Nothing was rejected.",
  ]);
});

test("a proposal asked again when its run resumes belongs to the resumed turn, which shows the steering", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  setProposal(model, {
    toolCallId: "call-2",
    subject: "edit_file app.py",
    kind: "edit",
    state: "pending",
  });
  finishTurn(model, {
    completed: false,
    reason: "paused",
    final: null,
    modifiedFiles: [],
    error: null,
    runId: "run-1",
    verdict: null,
  } as unknown as RunResult);
  startTurn(model, "fix it", null, false, undefined, true);
  startTurn(model, "fix it", "run-1", false, undefined, true, "one line only");

  setProposal(model, {
    toolCallId: "call-2",
    subject: "edit_file app.py",
    kind: "edit",
    state: "pending",
  });

  assert.equal(model.turns.length, 2);
  assert.equal(model.turns[1].steer, "one line only");
  assert.equal(model.proposals["call-2"].turn, 1);
  addEvent(model, {
    runId: "run-1",
    step: 2,
    response: "",
    action: null,
    result: "error: no JSON",
    state: null,
  } as unknown as AgentEvent);
  assert.equal(model.turns[1].steps.length, 1, "the resumed part's steps");
});

test("a command left waiting is asked again before it runs, never offered as a diff", () => {
  const command: SessionInfo = {
    ...KILLED,
    pending: {
      toolCallId: "call-2",
      tool: "run_command",
      arguments: { argv: ["python", "-m", "pytest"] },
    },
  };

  const [, , waiting] = resumableLines(resumableView(command, true));

  assert.equal(
    waiting,
    "Waiting for your answer when it stopped: call-2 run_command python -m pytest. Resume asks again before it runs.",
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentEvent } from "../../src/daemon/protocol";
import {
  enableWords,
  refusalWords,
  stateWords,
  stepNotice,
  wentWrong,
} from "../../src/run/stepNotice";

const RECORD = {
  runId: "run-1",
  modelNote: null,
  receiptId: null,
  outputSha256: null,
  resultSha256: null,
  effect: null,
} as const;

const refusedRead = (path: string, protectedBy: string | null): AgentEvent => ({
  ...RECORD,
  step: 1,
  response: "",
  action: { tool: "read_file", arguments: { path } },
  result: "error: path is not accessible",
  toolCallId: "call-1",
  state: "refused",
  reason: "path is not accessible",
  protectedBy,
  enabledBy: null,
});

test("a protected path tells the person which rule holds, and that the model was told less", () => {
  const notice = stepNotice(
    refusedRead(".env", "the built-in name .env"),
    "step 1: read_file .env",
    0,
  );
  assert.match(
    notice ?? "",
    /\.env is protected by the built-in name \.env; the model was told only that the path is not accessible/,
  );
});

test("a missing path is said to the person as missing, not in a protected path's words", () => {
  const missing: AgentEvent = {
    ...refusedRead("nowhere", null),
    action: { tool: "list_files", arguments: { path: "nowhere" } },
    reason: "no such path: nowhere; nearby: app.py",
  };
  assert.equal(
    refusalWords(missing),
    "no such path: nowhere; nearby: app.py; the model was told only: error: path is not accessible",
  );
});

test("a refusal whose reason is the model's own sentence adds nothing for the person", () => {
  assert.equal(
    refusalWords({
      ...refusedRead("app.py", null),
      result: "error: path is not a directory",
      reason: "path is not a directory",
    }),
    undefined,
  );
  assert.equal(
    refusalWords(refusedRead(".env", "the built-in name .env")),
    undefined,
  );
});

test("only the run's first refusal is a notification", () => {
  const event = refusedRead("missing.py", null);
  assert.ok(stepNotice(event, "step 1: read_file missing.py", 0));
  assert.equal(stepNotice(event, "step 2: read_file missing.py", 1), undefined);
});

test("every command that did not pass is a notification", () => {
  const failed: AgentEvent = {
    ...RECORD,
    step: 3,
    response: "",
    action: { tool: "run_command", arguments: { argv: ["pytest"] } },
    result: "status: 1\noutput:",
    toolCallId: "call-3",
    state: "approved",
    reason: null,
    protectedBy: null,
    enabledBy: null,
    effect: {
      toolCallId: "call-3",
      tool: "run_command",
      state: "approved",
      path: null,
      argv: ["pytest"],
      sha256: null,
      exitStatus: 1,
      timedOut: false,
      reason: null,
    },
  };
  assert.equal(
    stepNotice(failed, "step 3: run_command pytest", 5),
    "Counterfoil: step 3: run_command pytest approved, exit status 1",
  );
});

test("a refusal's notification gives the daemon's reason, never the result's words", () => {
  const event: AgentEvent = {
    ...refusedRead("missing.py", null),
    result: "some other wording the model read\nsecond line",
    reason: "path is not accessible",
  };
  assert.equal(
    stepNotice(event, "step 1: read_file missing.py", 0),
    "Counterfoil: step 1: read_file missing.py refused: path is not accessible (later refusals in this run are listed in the run panel only)",
  );
});

test("a failed step's notification gives the daemon's reason, never the result's words", () => {
  const failed: AgentEvent = {
    ...refusedRead("app.py", null),
    action: { tool: "edit_file", arguments: { path: "app.py" } },
    result: "error: wording the daemon may change",
    state: "failed",
    reason: "file changed since it was read",
  };
  assert.equal(
    stepNotice(failed, "step 1: edit_file app.py", 0),
    "Counterfoil: step 1: edit_file app.py failed: file changed since it was read",
  );
});

test("a No is not a notification: the person said it", () => {
  const rejected: AgentEvent = {
    ...refusedRead("app.py", null),
    state: "rejected",
    result: "error: operator denied the tool action",
    reason: null,
  };
  assert.equal(stepNotice(rejected, "step 1: read_file app.py", 0), undefined);
});

const stoppedCommand: AgentEvent = {
  ...RECORD,
  step: 4,
  response: "",
  action: { tool: "run_command", arguments: { argv: ["sleep", "60"] } },
  result: "status: terminated\noutput:",
  toolCallId: "call-4",
  state: "approved",
  reason: null,
  protectedBy: null,
  enabledBy: null,
  effect: {
    toolCallId: "call-4",
    tool: "run_command",
    state: "approved",
    path: null,
    argv: ["sleep", "60"],
    sha256: null,
    exitStatus: null,
    timedOut: false,
    reason: null,
  },
};

test("a command stopped before it ended is said so and went wrong, as its receipt's error says", () => {
  assert.equal(stateWords(stoppedCommand), "approved, stopped before it ended");
  assert.equal(wentWrong(stoppedCommand), true);
});

test("a command the person stopped is not a notification", () => {
  assert.equal(
    stepNotice(stoppedCommand, "step 4: run_command sleep 60", 0),
    undefined,
  );
});

test("an approved edit with no exit status is not a stopped command", () => {
  const edit: AgentEvent = {
    ...stoppedCommand,
    action: { tool: "edit_file", arguments: { path: "app.py" } },
    result: "ok: edited app.py",
    effect: {
      ...stoppedCommand.effect!,
      tool: "edit_file",
      argv: null,
      path: "app.py",
    },
  };
  assert.equal(stateWords(edit), "approved");
  assert.equal(wentWrong(edit), false);
});

test("a reviewed command says what became of its changes: a rejected review landed nothing", () => {
  const reviewed = (review: string): AgentEvent => ({
    ...stoppedCommand,
    effect: { ...stoppedCommand.effect!, exitStatus: 0, review },
  });
  assert.equal(
    stateWords(reviewed("rejected")),
    "approved, exit status 0; its changes rejected, nothing landed",
  );
  assert.equal(
    stateWords(reviewed("accepted")),
    "approved, exit status 0; its changes accepted",
  );
});

const notEnabled = (tool: string, enabledBy: string | null): AgentEvent => ({
  ...RECORD,
  step: 2,
  response: "",
  action: null,
  result: `error: tool is not enabled: ${tool}`,
  toolCallId: null,
  state: null,
  reason: null,
  protectedBy: null,
  enabledBy,
  notEnabled: tool,
});

test("a tool not enabled says, in one line, the setting and the command that enable it", () => {
  assert.equal(
    enableWords(notEnabled("edit_file", "allowWrites")),
    "To enable edit_file: turn on counterfoil.allowWrites, or run Counterfoil: Allow Writes and a Validation Command in This Folder",
  );
  assert.equal(
    enableWords(notEnabled("search_files", "searchFiles")),
    "To enable search_files: turn on counterfoil.searchFiles",
  );
  assert.equal(enableWords(notEnabled("edit_file", null)), undefined);
});

test("a tool not enabled is named from the event's notEnabled, never from the result's words", () => {
  const event: AgentEvent = {
    ...notEnabled("write_file", "allowWrites"),
    result: "error: tool is not enabled: edit_file",
  };
  assert.match(enableWords(event) ?? "", /^To enable write_file: /);
  assert.match(
    enableWords({ ...event, notEnabled: undefined }) ?? "",
    /^To enable it: /,
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentEvent } from "../../src/daemon/protocol";
import { describeAction } from "../../src/run/runModel";

/** A step the workspace made no record of (no call, no state), as the daemon sends it. */
function step(
  fields: Pick<AgentEvent, "step" | "response" | "action" | "result"> &
    Partial<Pick<AgentEvent, "noAction" | "readForModel">>,
): AgentEvent {
  return {
    ...fields,
    runId: "run-1",
    modelNote: null,
    protectedBy: null,
    enabledBy: null,
    toolCallId: null,
    state: null,
    receiptId: null,
    outputSha256: null,
    resultSha256: null,
    reason: null,
    effect: null,
  };
}

test("a search step names its pattern and where it searched", () => {
  assert.equal(
    describeAction(
      step({
        step: 1,
        response: "",
        action: {
          tool: "search_files",
          arguments: { pattern: "def double", path: "." },
        },
        result: "",
      }),
    ),
    'search_files "def double" in .',
  );
});

test("a step without an action says the daemon's reason, not a guess", () => {
  assert.equal(
    describeAction(
      step({
        step: 2,
        response: "{}",
        action: null,
        result: "error: tool is not enabled: write_file",
        noAction: "tool is not enabled: write_file",
      }),
    ),
    "no action (tool is not enabled: write_file)",
  );
  assert.equal(
    describeAction(
      step({ step: 3, response: "hm", action: null, result: null }),
    ),
    "no action (the response did not parse)",
  );
});

test("an observation's text is never read for the reason", () => {
  assert.equal(
    describeAction(
      step({
        step: 4,
        response: "{}",
        action: null,
        result: "error: looks like a reason",
      }),
    ),
    "no action (the response did not parse)",
  );
});

test("a file read for the model before its first step says so, not that the model asked", () => {
  assert.equal(
    describeAction(
      step({
        step: 0,
        response: "",
        action: { tool: "read_file", arguments: { path: "version.py" } },
        result: 'VERSION = "0.1.0"\n',
        readForModel: "version.py",
      }),
    ),
    "read for the model: version.py",
  );
});

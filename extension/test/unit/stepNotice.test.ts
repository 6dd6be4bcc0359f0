import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentEvent } from "../../src/protocol";
import { stepNotice } from "../../src/stepNotice";

const refusedRead = (path: string, protectedBy: string | null): AgentEvent => ({
  step: 1,
  response: "",
  action: { tool: "read_file", arguments: { path } },
  result: "error: path is not accessible",
  outcome: "refused",
  protectedBy,
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

test("only the run's first refusal is a notification", () => {
  const event = refusedRead("missing.py", null);
  assert.ok(stepNotice(event, "step 1: read_file missing.py", 0));
  assert.equal(stepNotice(event, "step 2: read_file missing.py", 1), undefined);
});

test("every failed command is a notification", () => {
  const failed: AgentEvent = {
    step: 3,
    response: "",
    action: { tool: "run_command", arguments: { argv: ["pytest"] } },
    result: "status: 1\noutput:",
    outcome: "failed",
  };
  assert.equal(
    stepNotice(failed, "step 3: run_command pytest", 5),
    "Counterfoil: step 3: run_command pytest failed: status: 1",
  );
});

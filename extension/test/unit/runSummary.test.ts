import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunResult } from "../../src/protocol";
import { summarizeRun } from "../../src/runSummary";

const step = (
  result: string | null,
  outcome: "ok" | "denied" | null = null,
) => ({
  step: 1,
  response: "{}",
  action: null,
  result,
  outcome,
});

test("a completed run names the changed files and the model's final words", () => {
  const result: RunResult = {
    completed: true,
    reason: "completed",
    final: "changed and validated app.py",
    modifiedFiles: ["app.py"],
    events: [step("edited app.py"), step("status: 0\noutput:\n")],
  };
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (changed app.py): changed and validated app.py",
  );
});

test("rejected proposals are counted from the steps' outcomes even when the model claims success", () => {
  const result: RunResult = {
    completed: true,
    reason: "completed",
    final: "changed and validated app.py",
    modifiedFiles: [],
    events: [
      step("no", "denied"),
      step("no", "denied"),
      step("error: operator denied, said only in words"),
      step(null),
    ],
  };
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (no files changed; 2 proposals rejected): changed and validated app.py",
  );
});

test("a stopped run gives its reason and error", () => {
  const result: RunResult = {
    completed: false,
    reason: "model_error",
    final: null,
    modifiedFiles: [],
    events: [],
    error: "scripted model ran out of responses",
  };
  assert.equal(
    summarizeRun(result),
    "Counterfoil run stopped (model_error: scripted model ran out of responses; no files changed).",
  );
});

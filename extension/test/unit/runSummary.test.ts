import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunResult } from "../../src/protocol";
import { summarizeRun } from "../../src/runSummary";

const step = (
  result: string | null,
  outcome: "ok" | "denied" | "refused" | "failed" | null = null,
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
    "Counterfoil finished (changed app.py). The model's claim: changed and validated app.py",
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
    "Counterfoil finished (no files changed; 2 proposals rejected). The model's claim: changed and validated app.py",
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

test("the daemon's verdict comes first: validation, files, rejected effects; the final answer is a claim", () => {
  const result: RunResult = {
    completed: true,
    reason: "completed",
    final: "changed and validated app.py",
    modifiedFiles: [],
    events: [step("no", "denied"), step("no", "denied")],
    verdict: {
      succeeded: false,
      approved: [],
      rejected: ["call-2", "call-3"],
      refused: [],
      failed: [],
      filesChanged: [],
      validation: "not_run",
    },
  };
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (no files changed; validation not run; 2 proposals rejected). The model's claim: changed and validated app.py",
  );
});

test("refused and failed effects are counted from the outcomes when there is no verdict", () => {
  const result: RunResult = {
    completed: true,
    reason: "completed",
    final: null,
    modifiedFiles: [],
    events: [
      { ...step("error: file changed since it was read"), outcome: "failed" },
      { ...step("error: not allowed"), outcome: "refused" },
    ],
  };
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (no files changed; 1 refused; 1 failed).",
  );
});

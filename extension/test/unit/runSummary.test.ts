import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunResult, Verdict } from "../../src/daemon/protocol";
import { runEndNotice, summarizeRun } from "../../src/run/runSummary";

const verdict = (fields: Partial<Verdict> = {}): Verdict => ({
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
  ...fields,
});

const run = (fields: Partial<RunResult>): RunResult => ({
  completed: true,
  reason: "completed",
  final: null,
  modifiedFiles: [],
  verdict: verdict(),
  error: null,
  runId: "run-1",
  ...fields,
});

test("a completed run names the changed files, the validation and the model's final words", () => {
  const result = run({
    final: "changed and validated app.py",
    modifiedFiles: ["app.py"],
    verdict: verdict({
      succeeded: true,
      approved: ["call-1", "call-2"],
      filesChanged: [
        { path: "app.py", sha256: "0".repeat(64), toolCallId: "call-1" },
      ],
      validation: "passed",
    }),
  });
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (changed app.py; validation passed). The model's claim: changed and validated app.py",
  );
});

test("a stopped run gives its reason and error", () => {
  const result = run({
    completed: false,
    reason: "model_error",
    error: "scripted model ran out of responses",
  });
  assert.equal(
    summarizeRun(result),
    "Counterfoil run stopped (model_error: scripted model ran out of responses; no files changed; validation not run).",
  );
});

test("the daemon's verdict comes first: validation, files, rejected effects; the final answer is a claim", () => {
  const result = run({
    final: "changed and validated app.py",
    verdict: verdict({ rejected: ["call-2", "call-3"] }),
  });
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (no files changed; validation not run; 2 proposals rejected). The model's claim: changed and validated app.py",
  );
});

test("refused and failed effects are counted from the verdict", () => {
  const result = run({
    verdict: verdict({ refused: ["call-1"], failed: ["call-2"] }),
  });
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (no files changed; validation not run; 1 refused; 1 failed).",
  );
});

test("a command whose reviewed changes were rejected is counted, and validation is not stale", () => {
  const result = run({
    verdict: verdict({ approved: ["call-1"], reviewRejected: ["call-1"] }),
  });
  assert.equal(
    summarizeRun(result),
    "Counterfoil finished (no files changed; validation not run; 1 review rejected).",
  );
});

test("a paused run says it can go on, not that it stopped", () => {
  const result = run({ completed: false, reason: "paused" });
  assert.equal(
    summarizeRun(result),
    "Counterfoil run paused, as asked: Resume in the run panel goes on from here (no files changed; validation not run).",
  );
});

test("the pause Steer asked for is not told as paused: the run goes on at once", () => {
  const paused = run({ completed: false, reason: "paused" });

  assert.equal(runEndNotice(paused, true), undefined);
  assert.match(runEndNotice(paused, false) ?? "", /^Counterfoil run paused/);
  assert.match(
    runEndNotice(run({ completed: false, reason: "model_error" }), true) ?? "",
    /^Counterfoil run stopped/,
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import type { RuleApproved, VerdictEffect } from "../../src/daemon/protocol";
import {
  addRuleApproval,
  emptyModel,
  finishTurn,
  startTurn,
  verdictLines,
} from "../../src/run/runModel";
import { liveStepWords, ruleApprovalLine } from "../../src/run/turnNotes";

const ARGV = ["python", "-m", "pytest", "tests/test_math.py", "-q"];

function told(runId: string): RuleApproved {
  return {
    runId,
    approved: {
      toolCallId: "call-3",
      tool: "run_command",
      arguments: { argv: ARGV },
      preview: {
        kind: "command",
        argv: ARGV,
        cwd: ".",
        timeoutSeconds: 60,
        runsAs: { mode: "confine", mechanism: "bubblewrap", network: false },
      },
    },
    rule: '{"argvPrefix":["python","-m","pytest"],"decision":"allow"}',
    ruleIndex: 2,
    ruleWords: "allow commands starting python -m pytest",
    rulesSha256: "a".repeat(64),
  };
}

test("a rule's approval is shown at once in its run's turn, approved, with the rule", () => {
  const model = emptyModel();
  startTurn(model, "earlier", "run-0");
  startTurn(model, "fix it", "run-1");
  addRuleApproval(model, told("run-1"));
  const proposal = model.proposals["call-3"];
  assert.equal(proposal.state, "approved");
  assert.equal(proposal.kind, "command");
  assert.equal(proposal.turn, 1);
  assert.equal(
    proposal.subject,
    "run_command python -m pytest tests/test_math.py -q",
  );
  assert.deepEqual(proposal.byRule, {
    index: 2,
    words: "allow commands starting python -m pytest",
  });
});

test("the panel line names the rule by its place and its words", () => {
  assert.equal(
    ruleApprovalLine({
      index: 2,
      words: "allow commands starting python -m pytest",
    }),
    "approved by rule 2: allow commands starting python -m pytest",
  );
});

test("while the rule-approved command runs, its step says so", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  addRuleApproval(model, told("run-1"));
  assert.equal(
    liveStepWords(Object.values(model.proposals), 0, new Set()),
    "running the approved command…",
  );
});

test("the verdict counts the effects a rule approved apart", () => {
  const model = emptyModel();
  startTurn(model, "fix it", "run-1");
  const effect = (id: string, byRule?: string): VerdictEffect => ({
    toolCallId: id,
    tool: "run_command",
    state: "approved",
    path: null,
    argv: ARGV,
    sha256: null,
    exitStatus: 0,
    timedOut: false,
    reason: null,
    byRule,
  });
  finishTurn(model, {
    completed: true,
    reason: "completed",
    final: "done",
    modifiedFiles: [],
    error: null,
    runId: "run-1",
    verdict: {
      succeeded: true,
      approved: ["call-2", "call-3"],
      rejected: [],
      refused: [],
      failed: [],
      reviewRejected: [],
      filesChanged: [],
      validation: "passed",
      validatedBy: "call-3",
      effects: [effect("call-2"), effect("call-3", told("run-1").rule)],
    },
  });
  assert.deepEqual(verdictLines(model.turns[0]), [
    "Validation passed",
    "No files changed",
    "1 effect approved by your rules, not asked",
  ]);
});

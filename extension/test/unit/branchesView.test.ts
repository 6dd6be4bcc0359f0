import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type {
  BranchInfo,
  ReceiptsResult,
  SelectBranchResult,
} from "../../src/daemon/protocol";
import {
  branchCard,
  diffPairs,
  knownRunIds,
  runChoices,
  selectionNote,
} from "../../src/run/branchesView";

const branch = (fields: Partial<BranchInfo> = {}): BranchInfo => ({
  name: "run-1.1",
  steering: "try the small fix",
  state: "ended",
  reason: "completed",
  steps: 2,
  validation: "passed",
  effects: { approved: 1, rejected: 0, refused: 0, failed: 0 },
  filesChanged: ["app.py"],
  copyRoot: "/logs/sessions/run-1/branches/1/root",
  prefixTokens: 120,
  prefillAvoided: 100,
  prefillNote: null,
  checksPassed: null,
  checks: [],
  final: "set to 3",
  ...fields,
});

test("a branch's card states its steps, verdict, files, effects and the prefill it avoided", () => {
  assert.deepEqual(branchCard(branch()).lines, [
    "2 steps, completed",
    "Validation passed",
    "Files changed: app.py",
    "1 effect approved",
    "Prefill avoided: 100 tokens of a 120-token shared prefix",
  ]);
});

test("a prefill the model could not count says why instead of a number", () => {
  const card = branchCard(
    branch({
      prefillAvoided: null,
      prefillNote: "the model reports no counters",
    }),
  );
  assert.ok(
    card.lines.includes(
      "Prefill avoided: unknown: the model reports no counters",
    ),
  );
});

test("a branch is labelled by its number and keeps its full name", () => {
  const card = branchCard(branch({ name: "run-1.12" }));
  assert.deepEqual([card.label, card.name], ["Branch 12", "run-1.12"]);
});

test("rejected and failed effects are counted beside the approved ones", () => {
  const card = branchCard(
    branch({ effects: { approved: 0, rejected: 2, refused: 0, failed: 1 } }),
  );
  assert.ok(card.lines.includes("0 effects approved, 2 rejected, 1 failed"));
});

test("checks of a task package are summed up and listed one by one", () => {
  const card = branchCard(
    branch({
      checksPassed: false,
      checks: [
        { name: "answer", passed: true, detail: "" },
        { name: "notes", passed: false, detail: "NOTES.md is missing" },
      ],
    }),
  );
  assert.ok(card.lines.includes("Checks failed: 1 of 2"));
  assert.equal(card.checks[1]?.detail, "NOTES.md is missing");
});

test("only an ended branch offers Keep; a removed copy offers no diff", () => {
  assert.equal(branchCard(branch()).canKeep, true);
  assert.equal(branchCard(branch({ state: "interrupted" })).canKeep, false);
  assert.equal(branchCard(branch({ state: "discarded" })).canKeep, false);
  assert.equal(branchCard(branch()).canShowDiff, true);
  assert.equal(branchCard(branch({ copyRoot: null })).canShowDiff, false);
  assert.equal(branchCard(branch({ filesChanged: [] })).canShowDiff, false);
});

test("a diff compares each changed file in the root with the branch's copy", () => {
  assert.deepEqual(
    diffPairs(branch({ filesChanged: ["app.py", "src/lib.py"] }), "/project"),
    [
      {
        path: "app.py",
        root: join("/project", "app.py"),
        branch: join("/logs/sessions/run-1/branches/1/root", "app.py"),
      },
      {
        path: "src/lib.py",
        root: join("/project", "src", "lib.py"),
        branch: join("/logs/sessions/run-1/branches/1/root", "src", "lib.py"),
      },
    ],
  );
  assert.deepEqual(diffPairs(branch({ copyRoot: null }), "/project"), []);
});

test("the runs to choose from are the daemon's and the log's, newest first, each once", () => {
  const receipts = {
    receipts: [{ run_id: "old" }, { run_id: "cli" }, { run_id: "cli" }],
    logPath: null,
    error: null,
    runs: [{ runId: "mine" }],
  } as unknown as ReceiptsResult;
  assert.deepEqual(knownRunIds(receipts), ["mine", "cli", "old"]);
});

test("the run picker shows each run's goal, start time and state, newest first, its id kept", () => {
  const receipts = {
    receipts: [{ run_id: "receipts-only" }],
    logPath: null,
    error: null,
    runs: [
      {
        runId: "mine",
        goal: "make it pass",
        startedAt: "2026-11-30T14:05:00+00:00",
      },
    ],
    records: [
      {
        runId: "cli",
        goal: "double the value",
        startedAt: "2026-11-30T14:03:27+00:00",
        state: "paused",
        effects: { approved: 1 },
      },
    ],
    exportedRuns: [],
  } as unknown as ReceiptsResult;
  assert.deepEqual(runChoices(receipts, new Date("2026-11-30T20:00:00Z")), [
    { runId: "mine", label: "make it pass", description: "14:05:00" },
    {
      runId: "cli",
      label: "double the value",
      description: "14:03:27 · paused · 1 approved",
    },
    {
      runId: "receipts-only",
      label: "(goal not recorded: known by its receipts only)",
      description: "",
    },
  ]);
});

const selection = (
  fields: Partial<SelectBranchResult>,
): SelectBranchResult => ({
  branch: "run-1.1",
  outcome: "selected",
  detail: null,
  applied: ["wrote app.py"],
  discarded: ["run-1.2"],
  ...fields,
});

test("a selection's outcome is one sentence: what was written and discarded, or why not", () => {
  assert.equal(
    selectionNote(selection({})),
    "Kept run-1.1: wrote app.py; discarded run-1.2.",
  );
  assert.equal(
    selectionNote(
      selection({
        outcome: "refused",
        detail: "branch run-1.1 did not finish",
      }),
    ),
    "run-1.1 was not kept: branch run-1.1 did not finish.",
  );
  assert.equal(
    selectionNote(
      selection({
        outcome: "stopped",
        detail: "app.py changed since the fork",
      }),
    ),
    "Keeping run-1.1 stopped: app.py changed since the fork.",
  );
});

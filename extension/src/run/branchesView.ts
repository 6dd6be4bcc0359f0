// The run panel's Branches section in plain values: each branch of a forked run as the card the
// webview draws (its facts in lines a person reads, what it offers), the file pairs its diff
// compares, and the runs a person can choose from. Pure: no VS Code, so it is unit-tested.

import * as path from "node:path";
import type {
  BranchInfo,
  BranchState,
  ReceiptsResult,
  SelectBranchResult,
} from "../daemon/protocol";
import { clock, recordShort } from "../receipts/receiptNodes";
import { filesChangedLine, plural, VALIDATION_WORDS } from "./runModel";

/** One branch as the webview draws it. */
export interface BranchCard {
  name: string;
  /** "Branch 1": its number, the name's last part. */
  label: string;
  steering: string;
  state: BranchState;
  stateWords: string;
  /** Its facts, facts first: steps and how it ended, validation, files, effects, prefill, checks. */
  lines: string[];
  /** Each held-out check, when a task package's checks graded the branch. */
  checks: { name: string; passed: boolean; detail: string }[];
  final: string | null;
  /** Its copy still holds changed files to compare with the root. */
  canShowDiff: boolean;
  /** It ran to its end and waits for a selection (the daemon still decides). */
  canKeep: boolean;
  /** What Keep does, in the daemon's words (the changes, the run it ends, what it discards). */
  keepWould: string | null;
}

const STATE_WORDS: Record<BranchState, string> = {
  running: "running",
  interrupted: "interrupted (its fork stopped before it finished)",
  ended: "ended: waiting for a choice",
  selected: "kept",
  discarded: "discarded",
};

function effectsLine(effects: Record<string, number>): string {
  const approved = effects.approved ?? 0;
  const others = (["rejected", "refused", "failed"] as const)
    .filter((kind) => (effects[kind] ?? 0) > 0)
    .map((kind) => `${effects[kind]} ${kind}`);
  return [`${plural(approved, "effect")} approved`, ...others].join(", ");
}

function prefillLine(branch: BranchInfo): string {
  if (branch.prefillAvoided === null) {
    const why = branch.prefillNote ? `: ${branch.prefillNote}` : "";
    return `Prefill avoided: unknown${why}`;
  }
  const prefix =
    branch.prefixTokens === null
      ? ""
      : ` of a ${branch.prefixTokens}-token shared prefix`;
  return `Prefill avoided: ${branch.prefillAvoided} tokens${prefix}`;
}

function checksLine(branch: BranchInfo): string | null {
  if (branch.checksPassed === null) return null;
  const passed = branch.checks.filter((check) => check.passed).length;
  const outcome = branch.checksPassed ? "passed" : "failed";
  return `Checks ${outcome}: ${passed} of ${branch.checks.length}`;
}

export function branchCard(branch: BranchInfo): BranchCard {
  const lines = [
    `${plural(branch.steps, "step")}${branch.reason ? `, ${branch.reason}` : ""}`,
    VALIDATION_WORDS[branch.validation] ?? `Validation ${branch.validation}`,
    filesChangedLine(branch.filesChanged),
    effectsLine(branch.effects),
    prefillLine(branch),
  ];
  const checks = checksLine(branch);
  if (checks) lines.push(checks);
  return {
    name: branch.name,
    label: `Branch ${branch.name.slice(branch.name.lastIndexOf(".") + 1)}`,
    steering: branch.steering,
    state: branch.state,
    stateWords: STATE_WORDS[branch.state] ?? branch.state,
    lines,
    checks: branch.checks.map((check) => ({ ...check })),
    final: branch.final,
    canShowDiff: branch.copyRoot !== null && branch.filesChanged.length > 0,
    canKeep: branch.state === "ended",
    keepWould: branch.keepWould ?? null,
  };
}

/** One changed file: the real root's copy on the left, the branch's on the right. */
export interface DiffPair {
  path: string;
  root: string;
  branch: string;
}

/** The files a branch changed, as absolute paths in the root and in the branch's copy. */
export function diffPairs(branch: BranchInfo, root: string): DiffPair[] {
  const copy = branch.copyRoot;
  if (copy === null) return [];
  return branch.filesChanged.map((file) => ({
    path: file,
    root: path.join(root, ...file.split("/")),
    branch: path.join(copy, ...file.split("/")),
  }));
}

/** The run ids a person can choose from, newest first: the daemon's runs, then the log's. */
export function knownRunIds(receipts: ReceiptsResult): string[] {
  const seen: string[] = [];
  const add = (runId: string | null | undefined): void => {
    if (runId && !seen.includes(runId)) seen.push(runId);
  };
  for (const run of [...receipts.runs].reverse()) add(run.runId);
  for (const receipt of [...receipts.receipts].reverse()) add(receipt.run_id);
  return seen;
}

/** A run to choose from, as the picker shows it: its goal, when it started and how it stands. */
export interface RunChoice {
  runId: string;
  /** The goal, or words saying it is not known here. */
  label: string;
  /** "14:03:27 · ended · 1 approved". */
  description: string;
}

/**
 * The runs a person can choose from, newest first, each with its goal and start time from the
 * daemon's runs and the runs' own records (a terminal's too); a run known only by its receipts
 * says so.
 */
export function runChoices(receipts: ReceiptsResult, now: Date): RunChoice[] {
  const records = new Map(
    (receipts.records ?? []).map((record) => [record.runId, record]),
  );
  const started = new Map(receipts.runs.map((run) => [run.runId, run]));
  const ids = [
    ...(receipts.records ?? []).map((record) => record.runId).reverse(),
    ...knownRunIds(receipts),
  ].filter((runId, index, all) => all.indexOf(runId) === index);
  const choices = ids.map((runId) => {
    const record = records.get(runId);
    const run = started.get(runId);
    const goal = record?.goal ?? run?.goal ?? null;
    const time = clock(record?.startedAt ?? run?.startedAt, now);
    return {
      runId,
      label: goal ?? "(goal not recorded: known by its receipts only)",
      description: [time, record ? recordShort(record) : null]
        .filter((part) => part)
        .join(" · "),
      startedAt: record?.startedAt ?? run?.startedAt ?? "",
    };
  });
  choices.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  return choices.map(({ runId, label, description }) => ({
    runId,
    label,
    description,
  }));
}

/** What a selection did, in one sentence for the section and the notification. */
export function selectionNote(result: SelectBranchResult): string {
  switch (result.outcome) {
    case "selected": {
      const applied =
        result.applied.length > 0
          ? result.applied.join("; ")
          : "nothing to apply, the root is as it was";
      const discarded =
        result.discarded.length > 0
          ? `; discarded ${result.discarded.join(", ")}`
          : "";
      return `Kept ${result.branch}: ${applied}${discarded}.`;
    }
    case "refused":
      return `${result.branch} was not kept: ${result.detail ?? "refused"}.`;
    case "stopped":
      return `Keeping ${result.branch} stopped: ${result.detail ?? "stopped"}.`;
  }
}

// The sentence shown when a run ends. It reports what happened on disk and the daemon's verdict
// first; the model's final words come last, labelled as its claim: a model may claim a change
// that the person rejected. Pure, unit-tested.

import type { RunResult } from "../daemon/protocol";

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

const VALIDATION: Record<string, string> = {
  passed: "validation passed",
  failed: "validation failed",
  not_run: "validation not run",
  stale: "validation stale",
};

/** The facts of a run: files changed, validation, effects rejected, refused or failed. */
export function runFacts(result: RunResult): string {
  const verdict = result.verdict;
  const files = verdict.filesChanged.map((file) => file.path);
  const facts = [
    files.length > 0 ? `changed ${files.join(", ")}` : "no files changed",
    VALIDATION[verdict.validation] ?? `validation ${verdict.validation}`,
  ];
  if (verdict.rejected.length > 0) {
    facts.push(`${plural(verdict.rejected.length, "proposal")} rejected`);
  }
  if (verdict.reviewRejected.length > 0) {
    facts.push(`${verdict.reviewRejected.length} review rejected`);
  }
  if (verdict.refused.length > 0) {
    facts.push(`${verdict.refused.length} refused`);
  }
  if (verdict.failed.length > 0) {
    facts.push(`${verdict.failed.length} failed`);
  }
  return facts.join("; ");
}

/**
 * What a run's end says in a notification: its summary, or nothing for the pause Steer asked
 * for, since the run goes on at once with the person's message (a "paused" toast then
 * contradicts the panel, which shows it resumed).
 */
export function runEndNotice(
  result: RunResult,
  steering: boolean,
): string | undefined {
  return steering && result.reason === "paused"
    ? undefined
    : summarizeRun(result);
}

export function summarizeRun(result: RunResult): string {
  const facts = runFacts(result);
  if (result.completed) {
    const claim = result.final ? ` The model's claim: ${result.final}` : "";
    return `Counterfoil finished (${facts}).${claim}`;
  }
  if (result.reason === "paused") {
    return `Counterfoil run paused, as asked: Resume in the run panel goes on from here (${facts}).`;
  }
  const why = result.error
    ? `${result.reason}: ${result.error}`
    : result.reason;
  return `Counterfoil run stopped (${why}; ${facts}).`;
}

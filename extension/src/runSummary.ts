// The sentence shown when a run ends. It reports what happened on disk, not only the model's
// final words: a model may claim a change that the person rejected. Pure, unit-tested.

import type { RunResult } from "./protocol";

/** Proposals the person (or the daemon's confirm timeout) answered No to, from each step's outcome. */
export function deniedCount(result: RunResult): number {
  return result.events.filter((event) => event.outcome === "denied").length;
}

export function summarizeRun(result: RunResult): string {
  const changed =
    result.modifiedFiles.length > 0
      ? `changed ${result.modifiedFiles.join(", ")}`
      : "no files changed";
  const denied = deniedCount(result);
  const facts =
    denied > 0
      ? `${changed}; ${denied} proposal${denied === 1 ? "" : "s"} rejected`
      : changed;
  if (result.completed) {
    return `Counterfoil finished (${facts}): ${result.final ?? ""}`.trimEnd();
  }
  const why = result.error
    ? `${result.reason}: ${result.error}`
    : result.reason;
  return `Counterfoil run stopped (${why}; ${facts}).`;
}

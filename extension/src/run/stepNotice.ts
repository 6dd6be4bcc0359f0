// What a step says in a notification, where the person is looking: a failed step each time,
// a refusal once per run (the rest are in the run panel, not stacked toasts), and for a
// protected path which rule protects it, which the model is never told. Pure, unit-tested.

import type { AgentEvent, StepRecord } from "../daemon/protocol";

/**
 * An approved command the record gives neither an exit status nor a timeout: it was stopped
 * (Stop run, a shutdown) before it ended, and its receipt records it as an error.
 */
export function stoppedCommand(record: StepRecord): boolean {
  const effect = record.effect;
  return (
    record.state === "approved" &&
    effect !== null &&
    effect.argv !== null &&
    effect.exitStatus === null &&
    !effect.timedOut
  );
}

/** Whether a step's call went wrong: a No, a refusal, a failure, or a command that did not pass. */
export function wentWrong(record: StepRecord): boolean {
  if (record.state === "approved") {
    const effect = record.effect;
    return (
      stoppedCommand(record) ||
      (effect !== null &&
        (effect.timedOut ||
          (effect.exitStatus !== null && effect.exitStatus !== 0)))
    );
  }
  return record.state !== null;
}

/** The state of a step's call in words, with how a command ended: "approved, exit status 1". */
export function stateWords(record: StepRecord): string | null {
  if (record.state === null) {
    return null;
  }
  const effect = record.effect;
  if (record.state === "approved" && effect?.timedOut) {
    return "approved, timed out";
  }
  if (stoppedCommand(record)) {
    return "approved, stopped before it ended";
  }
  if (record.state === "approved" && effect && effect.exitStatus !== null) {
    return `approved, exit status ${effect.exitStatus}${reviewWords(effect.review)}`;
  }
  return record.state;
}

/** A reviewed command's decision on its changes: what landed in the root, if anything. */
const REVIEW_WORDS: Record<string, string> = {
  accepted: "; its changes accepted",
  "partially accepted": "; its changes partially accepted",
  rejected: "; its changes rejected, nothing landed",
  "nothing to apply": "; it changed nothing to review",
  "not applied": "; its changes not applied, nothing landed",
};

function reviewWords(review: string | null | undefined): string {
  return review ? (REVIEW_WORDS[review] ?? `; review ${review}`) : "";
}

/** The person's words for a protected path ("app/.env is protected by the built-in name .env"). */
export function protectedWords(event: AgentEvent): string | undefined {
  const path =
    event.action && "tool" in event.action && event.action.arguments.path;
  if (!event.protectedBy || typeof path !== "string") {
    return undefined;
  }
  return `${path} is protected by ${event.protectedBy}; the model was told only that the path is not accessible`;
}

/**
 * For the person, when the gate told them more than the model (a path that does not exist:
 * "no such path: nowhere; nearby: app.py", while the model read the neutral words a protected
 * path gets): the daemon's `reason`, shown only where it is not the model's own sentence.
 */
export function refusalWords(event: AgentEvent): string | undefined {
  if (event.state !== "refused" || event.protectedBy || event.effect) {
    return undefined;
  }
  const reason = event.reason;
  if (!reason || event.result === `error: ${reason}`) {
    return undefined;
  }
  return `${reason}; the model was told only: ${event.result ?? "nothing"}`;
}

/** The editor's name for each setting the daemon may name as the one that enables a tool. */
const ALLOW_COMMAND =
  "Counterfoil: Allow Writes and a Validation Command in This Folder";

/**
 * How to turn on the tool a step found not enabled, in one line ("To enable edit_file: turn on
 * counterfoil.allowWrites, or run …"): the daemon names the tool (`notEnabled`) and the setting
 * (`enabledBy`); the model's `result` is never read.
 */
export function enableWords(event: AgentEvent): string | undefined {
  const setting = event.enabledBy;
  if (!setting) {
    return undefined;
  }
  const tool = event.notEnabled;
  const what = tool ? `To enable ${tool}` : "To enable it";
  const how =
    setting === "allowedCommands"
      ? `add the command to counterfoil.allowedCommands, or run ${ALLOW_COMMAND}`
      : setting === "allowWrites"
        ? `turn on counterfoil.allowWrites, or run ${ALLOW_COMMAND}`
        : `turn on counterfoil.${setting}`;
  return `${what}: ${how}`;
}

/**
 * Why a step that went wrong went wrong, from the daemon's record: the gate's or the person's
 * `reason`, else how it ended ("approved, exit status 1"); never the model's `result`.
 */
export function wrongWords(event: StepRecord): string {
  return event.reason ?? stateWords(event) ?? "";
}

/**
 * The notification for this step, or undefined for none. `step` is the step in words
 * ("step 2: read_file .env"); `refusalsBefore` counts the run's earlier refusals.
 */
export function stepNotice(
  event: AgentEvent,
  step: string,
  refusalsBefore: number,
): string | undefined {
  if (stoppedCommand(event)) {
    return undefined; // the person stopped it, and the run panel says so
  }
  if (event.state !== "refused") {
    const why = event.reason ? `: ${event.reason}` : "";
    return event.state !== "rejected" && wentWrong(event)
      ? `Counterfoil: ${step} ${stateWords(event) ?? ""}${why}`
      : undefined;
  }
  if (refusalsBefore > 0) {
    return undefined;
  }
  const why = protectedWords(event) ?? event.reason ?? "the gate refused it";
  return `Counterfoil: ${step} refused: ${why} (later refusals in this run are listed in the run panel only)`;
}

// A notification's button pressed after its moment: the proposal was already answered, or
// withdrawn when the run stopped. The button must not act, and must not do nothing silently:
// it says what became of the proposal. Pure, unit-tested.

import type { ProposalState } from "../run/runModel";

export function lateButtonNotice(
  button: string,
  subject: string,
  toolCallId: string,
  outcome: ProposalState | "asked again" | undefined,
): string {
  return `Counterfoil: ${button} did nothing: ${subject} (${toolCallId}) ${outcomeWords(outcome)}.`;
}

/** `lateButtonNotice` for a pending approval's own subject, call id and outcome. */
export function lateNotice(
  button: string,
  approval: {
    subject: string;
    toolCallId: string;
    outcome?: ProposalState | "asked again";
  },
): string {
  return lateButtonNotice(
    button,
    approval.subject,
    approval.toolCallId,
    approval.outcome,
  );
}

function outcomeWords(
  outcome: ProposalState | "asked again" | undefined,
): string {
  switch (outcome) {
    case "asked again":
      return "was withdrawn and is pending again: answer its new question";
    case "approved":
      return "was already accepted";
    case "rejected":
      return "was already rejected";
    case "stale":
      return "was already answered as out of date";
    case "interrupted":
      return "is no longer asked: the run stopped or paused before it was answered (Resume asks again)";
    case "withdrawn":
      return "was withdrawn when the run paused or was steered (Resume asks again)";
    case "refused":
      return "was refused";
    case "failed":
      return "was approved and failed";
    case "pending":
    case undefined:
      return "is no longer waiting for an answer";
  }
}

// The answer to `counterfoil/confirm` as the daemon is told it, from what the review decided.
// Pure, unit-tested.

import type { ConfirmResult } from "./protocol";

/**
 * What the review decided, as the daemon is told it: only an explicit Accept approves; the
 * edited text travels with a Yes, and a reason, a re-proposal and the editor's cause (the file
 * went stale, the diff was closed) with a No.
 */
export function confirmAnswer(result: ConfirmResult): ConfirmResult {
  const answer: ConfirmResult = { approved: result.approved === true };
  if (answer.approved && typeof result.text === "string") {
    answer.text = result.text;
  }
  if (!answer.approved && typeof result.reason === "string") {
    answer.reason = result.reason;
  }
  if (!answer.approved && result.repropose === true) {
    answer.repropose = true;
  }
  if (
    !answer.approved &&
    (result.cause === "stale" || result.cause === "closed")
  ) {
    answer.cause = result.cause;
  }
  return answer;
}

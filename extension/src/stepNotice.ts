// What a step says in a notification, where the person is looking: a failed command each time,
// a refusal once per run (the rest are in the run panel, not stacked toasts), and for a
// protected path which rule protects it, which the model is never told. Pure, unit-tested.

import type { AgentEvent } from "./protocol";

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
 * The notification for this step, or undefined for none. `step` is the step in words
 * ("step 2: read_file .env"); `refusalsBefore` counts the run's earlier refusals.
 */
export function stepNotice(
  event: AgentEvent,
  step: string,
  refusalsBefore: number,
): string | undefined {
  const first = (event.result ?? "").split("\n", 1)[0];
  if (event.outcome === "failed") {
    return `Counterfoil: ${step} failed: ${first}`;
  }
  if (event.outcome !== "refused" || refusalsBefore > 0) {
    return undefined;
  }
  const why = protectedWords(event) ?? first;
  return `Counterfoil: ${step} refused: ${why} (later refusals in this run are listed in the run panel only)`;
}

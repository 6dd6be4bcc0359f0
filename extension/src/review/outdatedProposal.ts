// A proposal whose file changed while it waited (the person typed with autosave on, or pressed
// Save): it no longer applies, but it is not answered No on its own. The person may have the
// model's edit proposed again on the new bytes, when its `old` text still occurs exactly once,
// or reject it with that reason. Pure, unit-tested.

/** How often `old` occurs in `text`, overlapping occurrences counted (as the daemon counts). */
export function occurrences(text: string, old: string): number {
  if (old === "") {
    return 0;
  }
  let count = 0;
  for (let at = text.indexOf(old); at !== -1; at = text.indexOf(old, at + 1)) {
    count++;
  }
  return count;
}

/** Whether the model's edit can be proposed again on `current` (the file's text now). */
export function canRepropose(
  tool: string,
  args: Record<string, unknown>,
  current: string | null,
): boolean {
  return (
    tool === "edit_file" &&
    typeof args.old === "string" &&
    current !== null &&
    occurrences(current, args.old) === 1
  );
}

export const OUTDATED_REJECTION =
  "the file changed while the proposal waited, so it no longer applies";

/** The panel's reason and the notification's words for an outdated proposal. */
export function outdatedWords(
  subject: string,
  toolCallId: string,
  mismatch: string,
  repropose: boolean,
): { reason: string; message: string } {
  const reason = `no longer applies: ${mismatch}`;
  const offer = repropose
    ? "Re-propose applies the model's edit to the file as it is now (a fresh diff); Reject tells the model why."
    : "The model's old text is no longer there exactly once, so it cannot be proposed again: Reject tells the model why.";
  return {
    reason,
    message: `${subject} (${toolCallId}) is still pending but no longer applies: ${mismatch} ${offer}`,
  };
}

// Discarding a run kept on disk: asked first, then said. The daemon closes the run for good
// (`counterfoil/discard`: its listing reads "discarded" everywhere, the terminal's too) and
// undoes nothing; these are the words around it. Pure, unit-tested.

import type { DiscardResult } from "../daemon/protocol";

export interface DiscardQuestion {
  message: string;
  detail: string;
}

/** The modal question before a discard: what goes, and what stays. */
export function discardQuestion(
  goal: string,
  filesChanged: number,
): DiscardQuestion {
  const stays =
    filesChanged === 0
      ? "It changed no files."
      : `The ${filesChanged === 1 ? "file" : `${filesChanged} files`} it changed stay${filesChanged === 1 ? "s" : ""} as ${filesChanged === 1 ? "it is" : "they are"} (Revert in the receipts view undoes a change).`;
  return {
    message: `Discard the run "${firstLine(goal)}"?`,
    detail: `It will not be offered to resume again, here or in the terminal. ${stays}`,
  };
}

/** What the person is told once the daemon has discarded the run. */
export function discardedNotice(result: DiscardResult): string {
  const files = [...new Set(result.filesChanged.map((file) => file.path))];
  const unasked = result.pending
    ? ` Its open proposal (${result.pending}) will not be asked.`
    : "";
  const kept =
    files.length === 0
      ? " It changed no files."
      : ` Kept as they are: ${files.join(", ")}.`;
  return `Counterfoil: discarded the run "${firstLine(result.goal)}".${unasked}${kept}`;
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

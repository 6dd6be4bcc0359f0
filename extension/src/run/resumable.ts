// A run kept on disk that can go on (interrupted by a crash, a kill or a reload, or paused), as
// the run panel offers it: what the receipts show it wrote and the approval it was waiting for,
// in the daemon's facts. Pure, unit-tested; the panel draws it with Resume, Steer and resume,
// and Discard.

import type {
  FileWritten,
  PendingProposal,
  SessionInfo,
} from "../daemon/protocol";
import { argvText } from "../argvText";

export interface ResumableView {
  runId: string;
  goal: string;
  state: "interrupted" | "paused";
  filesChanged: FileWritten[];
  pending: PendingProposal | null;
  /** The daemon died under a run of this window (rather than a run found at start). */
  crashed: boolean;
}

/** The latest interrupted or paused run the person has not discarded. */
export function latestResumable(
  sessions: SessionInfo[],
  discarded: ReadonlySet<string>,
): SessionInfo | undefined {
  return sessions
    .filter(
      (session) =>
        (session.state === "interrupted" || session.state === "paused") &&
        !discarded.has(session.runId),
    )
    .at(-1);
}

export function resumableView(
  session: SessionInfo,
  crashed: boolean,
): ResumableView {
  return {
    runId: session.runId,
    goal: session.goal ?? "",
    state: session.state === "paused" ? "paused" : "interrupted",
    filesChanged: session.filesChanged,
    pending: session.pending,
    crashed,
  };
}

function target(pending: PendingProposal): string {
  const value = pending.arguments.path ?? pending.arguments.argv;
  return Array.isArray(value)
    ? argvText(value.map(String))
    : typeof value === "string"
      ? value
      : "";
}

/** What the panel says of the run, facts first: never "rejected", never "no files changed". */
export function resumableLines(view: ResumableView): string[] {
  const lines = [
    view.state === "paused"
      ? "Run paused: it can go on from where it stopped."
      : view.crashed
        ? "Run interrupted: the daemon stopped before the run ended. Nothing was rejected."
        : "Run interrupted: its daemon stopped before it ended. Nothing was rejected.",
  ];
  if (view.filesChanged.length === 0) {
    lines.push("The receipts show no file written by this run.");
  }
  for (const file of view.filesChanged) {
    lines.push(
      `Written: ${file.path} by ${file.toolCallId} (${file.tool}), as its receipt shows.`,
    );
  }
  if (view.pending) {
    // A command has no diff: it is asked again as it was, to run on the files as they are then.
    const again = Array.isArray(view.pending.arguments.argv)
      ? "Resume asks again before it runs."
      : "Resume asks again, as a fresh diff against the file as it is now.";
    lines.push(
      `Waiting for your answer when it stopped: ${view.pending.toolCallId} ${view.pending.tool} ${target(view.pending)}. ${again}`,
    );
  }
  return lines;
}

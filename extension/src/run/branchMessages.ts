// The messages of the run panel's Branches section between its host (branchesSection.ts) and
// its webview part (branchesScript.ts), written once for both sides. Types only.

import type { BranchCard } from "./branchesView";

/** What the Branches section of the webview posts back. */
export type BranchPanelMessage =
  | { type: "showBranchDiff"; branch: string }
  | { type: "keepBranch"; branch: string }
  | { type: "closeBranches" };

/** What the host posts: the run's branches, or nothing to show (`runId` null). */
export interface BranchesMessage {
  type: "branches";
  runId: string | null;
  cards: BranchCard[];
  /** The daemon's sentence when the run cannot be listed, or a selection's outcome. */
  note: string | null;
  /** The branch being kept while its changes wait for Accept or Reject. */
  keeping: string | null;
  /** Scroll the section into view: Show Branches was asked for. */
  reveal: boolean;
}

export function isBranchPanelMessage(message: {
  type: string;
}): message is BranchPanelMessage {
  return (
    message.type === "showBranchDiff" ||
    message.type === "keepBranch" ||
    message.type === "closeBranches"
  );
}

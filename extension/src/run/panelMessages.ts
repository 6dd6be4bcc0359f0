// The messages between the run panel's host (runPanel.ts) and its webview script
// (runPanelScript.ts), written once for both sides. Types only: the webview bundle imports
// nothing at run time.

import type { BranchPanelMessage } from "./branchMessages";
import type { ResumableView } from "./resumable";
import type { ProposalView, TurnView } from "./runModel";

/** What the webview posts back. */
export type PanelMessage =
  | { type: "accept"; id: string }
  | { type: "reject"; id: string; reason?: string }
  | { type: "showDiff"; id: string }
  | { type: "hunks"; id: string; keep: boolean[] }
  | { type: "send"; text: string }
  | { type: "newConversation" }
  | { type: "stop" }
  | { type: "pause" }
  | { type: "steer" }
  | { type: "resume"; runId: string; steer?: string }
  | { type: "discard"; runId: string }
  | { type: "openOutput"; sha256: string }
  | { type: "allowFolderGrants" }
  | { type: "ready" }
  | BranchPanelMessage;

/**
 * A turn as the webview draws it: with its verdict in words once it ended (none while it runs),
 * the heading of the step in progress, and the rules file the run read in one line.
 */
export type DrawnTurn = TurnView & {
  verdictLines: string[];
  liveStepWords: string | null;
  agentsFileLine: string | null;
};

/** What the host posts: the whole conversation and every proposal, by call id. */
export interface ModelMessage {
  type: "model";
  turns: DrawnTurn[];
  proposals: Record<string, ProposalView>;
  /** A run kept on disk that can go on, with what to say of it. */
  resumable: (ResumableView & { lines: string[] }) | null;
  /** What the folder's settings did, one line each; `waiting`: a grant asks for a yes;
   * `refused`: the person's own values refused, with what is used instead. */
  folderSettings: {
    lines: string[];
    waiting: boolean;
    refused: string[];
  } | null;
  /** What the panel is waiting for before it can say whether a run can go on (the daemon
   * starting, its runs listed after a reload), so an empty Goal box does not read as nothing. */
  looking: string | null;
}

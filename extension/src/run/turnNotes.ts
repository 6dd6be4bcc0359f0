// What the run panel says beside the model's words: the step in progress, and the rules file the
// run read. Pure, unit-tested; runPanel.ts posts the words, runPanelScript.ts draws them.

import type { AgentsFileRecord } from "../daemon/protocol";
import type { ProposalView } from "./runModel";

/**
 * The heading's words for the step in progress of turn `turn`: an answer awaited, an approved
 * effect being done (a command running), or the model generating. `shown` holds the proposals
 * already drawn with a finished step.
 */
export function liveStepWords(
  proposals: readonly ProposalView[],
  turn: number,
  shown: ReadonlySet<string>,
): string {
  const open = proposals.filter(
    (proposal) =>
      proposal.turn === turn &&
      !shown.has(proposal.toolCallId) &&
      // An approved definition is no effect: the run goes on to the model.
      !(proposal.kind === "mcp_definition" && proposal.state !== "pending"),
  );
  if (open.some((proposal) => proposal.state === "pending")) {
    return "waiting for your answer";
  }
  const approved = open.find((proposal) => proposal.state === "approved");
  if (approved) {
    return approved.kind === "command"
      ? "running the approved command…"
      : approved.kind === "mcp_call"
        ? "calling the approved MCP tool…"
        : "writing the approved edit…";
  }
  return "generating…";
}

/** The rules the run read, in one line: "AGENTS.md · sha256 1a2b3c4d5e6f · 1,204 bytes". */
export function agentsFileLine(
  file: AgentsFileRecord | null | undefined,
): string | null {
  if (!file) {
    return null;
  }
  if (file.sha256 === null) {
    return `${file.path} · not read (${file.notRead ?? "unreadable"})`;
  }
  const size =
    file.bytes === null ? "" : ` · ${file.bytes.toLocaleString("en-US")} bytes`;
  return `${file.path} · sha256 ${file.sha256.slice(0, 12)}${size}`;
}

/** What the run panel says of a call the person's rule approved: "approved by rule 2: allow
 * commands starting python -m pytest". */
export function ruleApprovalLine(byRule: {
  index: number;
  words: string;
}): string {
  return `approved by rule ${byRule.index}: ${byRule.words}`;
}

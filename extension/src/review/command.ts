// A command's approval, and an MCP tool's (its definition before first use, each call): asked in
// the run panel (its proposal, with Accept, Reject and a reason) and in a notification with its
// exact argv, folder and how it runs (or the MCP tool's definition, or the call's arguments),
// with Accept, Reject and Reject with Reason (and for a command, Always Allow: Accept, and its
// exact-argv rule added to the person's settings). Nothing modal: Pause, Steer and Stop stay at
// hand while it waits, and closing the notification (Escape) answers nothing; only a button does.

import * as vscode from "vscode";
import type {
  CommandPreview,
  ConfirmParams,
  ConfirmResult,
  McpCallPreview,
  McpDefinitionPreview,
} from "../daemon/protocol";
import { type ProposalView, takesReason } from "../run/runModel";
import { ALWAYS_ALLOW, alwaysAllow } from "./alwaysAllow";
import { lateNotice } from "./lateAnswer";
import { callDetail, definitionDetail, mcpQuestion } from "./mcpProposal";
import type { PendingApprovals } from "./pending";
import { commandDetail } from "./proposal";

const ACCEPT = "Accept";
const REJECT = "Reject";
const REJECT_WITH_REASON = "Reject with Reason…";

export async function confirmCommand(
  pending: PendingApprovals,
  params: ConfirmParams,
  preview: CommandPreview,
  token: vscode.CancellationToken,
  rejectWithReason: (toolCallId: string) => unknown,
): Promise<ConfirmResult> {
  const note = params.note ? ` (${params.note})` : "";
  const question = `Counterfoil wants to run a command (${params.toolCallId})${note}: ${commandDetail(preview).split("\n").join(" · ")}`;
  return askInNotification(
    pending,
    params,
    "command",
    question,
    token,
    rejectWithReason,
    undefined,
    preview.argv,
  );
}

/** An MCP tool's definition, or one call of it, with the whole of it in the run panel. */
export async function confirmMcp(
  pending: PendingApprovals,
  params: ConfirmParams,
  preview: McpDefinitionPreview | McpCallPreview,
  token: vscode.CancellationToken,
  rejectWithReason: (toolCallId: string) => unknown,
): Promise<ConfirmResult> {
  const detail =
    preview.kind === "mcp_call"
      ? callDetail(preview)
      : definitionDetail(preview);
  return askInNotification(
    pending,
    params,
    preview.kind,
    mcpQuestion(params.toolCallId, preview, params.note),
    token,
    rejectWithReason,
    detail,
  );
}

async function askInNotification(
  pending: PendingApprovals,
  params: ConfirmParams,
  kind: ProposalView["kind"],
  question: string,
  token: vscode.CancellationToken,
  rejectWithReason: (toolCallId: string) => unknown,
  detail?: string,
  /** A command's argv: "Always Allow" approves it and adds its exact rule to the person's. */
  argv?: readonly string[],
): Promise<ConfirmResult> {
  const { answer, approval } = pending.waitForAnswer(
    params,
    token,
    kind,
    undefined,
    detail,
  );
  const answers = [
    ACCEPT,
    ...(argv ? [ALWAYS_ALLOW] : []),
    REJECT,
    ...(takesReason({ kind }) ? [REJECT_WITH_REASON] : []),
  ];
  void vscode.window.showWarningMessage(question, ...answers).then((choice) => {
    if (choice === undefined) {
      return; // closed: the question stays open in the run panel
    }
    if (!pending.isWaiting(approval)) {
      void vscode.window.showInformationMessage(lateNotice(choice, approval));
    } else if (choice === ACCEPT) {
      approval.settle({ approved: true }, "accepted");
    } else if (choice === ALWAYS_ALLOW && argv) {
      approval.settle({ approved: true }, "accepted");
      void alwaysAllow(argv);
    } else if (choice === REJECT) {
      approval.settle({ approved: false }, "rejected");
    } else {
      void rejectWithReason(params.toolCallId);
    }
  });
  return answer;
}

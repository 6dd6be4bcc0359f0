// A command's approval: asked in the run panel (its proposal, with Accept, Reject and a reason)
// and in a notification with its exact argv, folder and how it runs, with Accept, Reject and
// Reject with Reason. Nothing modal: Pause, Steer and Stop stay at hand while it waits, and
// closing the notification (Escape) answers nothing; only a button does.

import * as vscode from "vscode";
import type {
  CommandPreview,
  ConfirmParams,
  ConfirmResult,
} from "../daemon/protocol";
import { lateNotice } from "./lateAnswer";
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
  const { answer, approval } = pending.waitForAnswer(params, token, "command");
  const note = params.note ? ` (${params.note})` : "";
  const question = `Counterfoil wants to run a command (${params.toolCallId})${note}: ${commandDetail(preview).split("\n").join(" · ")}`;
  void vscode.window
    .showWarningMessage(question, ACCEPT, REJECT, REJECT_WITH_REASON)
    .then((choice) => {
      if (choice === undefined) {
        return; // closed: the question stays open in the run panel
      }
      if (!pending.isWaiting(approval)) {
        void vscode.window.showInformationMessage(lateNotice(choice, approval));
      } else if (choice === ACCEPT) {
        approval.settle({ approved: true }, "accepted");
      } else if (choice === REJECT) {
        approval.settle({ approved: false }, "rejected");
      } else {
        void rejectWithReason(params.toolCallId);
      }
    });
  return answer;
}

// A command's approval: a modal with its exact argv and cwd and exactly two buttons, Accept and
// Reject (the close affordance), so anything but Accept answers No.

import * as vscode from "vscode";
import type {
  CommandPreview,
  ConfirmParams,
  ConfirmResult,
} from "../daemon/protocol";
import { lateNotice } from "./lateAnswer";
import type { PendingApprovals } from "./pending";
import { commandDetail } from "./proposal";

export async function confirmCommand(
  pending: PendingApprovals,
  log: vscode.LogOutputChannel,
  params: ConfirmParams,
  preview: CommandPreview,
  token: vscode.CancellationToken,
): Promise<ConfirmResult> {
  const { answer, approval } = pending.waitForAnswer(params, token, "command");
  // Only a button answers: a modal that went away with its window (a reload) leaves the
  // approval pending, and the run panel still answers it.
  const settleWith = (choice: vscode.MessageItem | undefined) => {
    if (choice && !pending.isWaiting(approval)) {
      void vscode.window.showInformationMessage(
        lateNotice(choice.title, approval),
      );
    } else if (choice?.title === "Accept") {
      approval.settle({ approved: true }, "accepted");
    } else if (choice?.title === "Reject") {
      approval.settle({ approved: false }, "rejected");
    }
  };
  const question = `Counterfoil wants to run a command (${params.toolCallId})`;
  // Reject is the close affordance, so the modal has exactly two buttons (no extra Cancel).
  const accept: vscode.MessageItem = { title: "Accept" };
  const reject: vscode.MessageItem = {
    title: "Reject",
    isCloseAffordance: true,
  };
  vscode.window
    .showWarningMessage(
      question,
      { modal: true, detail: commandDetail(preview) },
      accept,
      reject,
    )
    .then(settleWith, (error: unknown) => {
      // The workbench may refuse modals (e.g. under test); ask in a notification instead.
      log.warn(
        `${params.toolCallId}: no modal (${String(error)}); asking in a notification`,
      );
      void vscode.window
        .showWarningMessage(
          `${question}: ${commandDetail(preview).split("\n").slice(0, 2).join(", ")}`,
          accept,
          reject,
        )
        .then(settleWith);
    });
  return answer;
}

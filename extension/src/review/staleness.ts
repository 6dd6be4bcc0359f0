// A pending edit whose file changed on disk while it waited no longer applies: Accept is disabled
// (a context key for the editor title) and the person is offered to have it proposed again on
// the new bytes, or to reject it with that reason. Bytes back to the base make it apply again.

import { createHash } from "node:crypto";
import * as vscode from "vscode";
import {
  canRepropose,
  OUTDATED_REJECTION,
  outdatedWords,
} from "./outdatedProposal";
import type { PendingApproval, PendingApprovals } from "./pending";
import { baseMismatch } from "./proposal";
import { lateButtonNotice } from "./lateAnswer";

const STALE_CONTEXT = "counterfoil.proposalStale";

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The file's bytes, or null when it does not exist. */
export async function diskBytes(uri: vscode.Uri): Promise<Uint8Array | null> {
  try {
    return await vscode.workspace.fs.readFile(uri);
  } catch (error) {
    if (
      error instanceof vscode.FileSystemError &&
      error.code === "FileNotFound"
    ) {
      return null;
    }
    throw error;
  }
}

export class ProposalStaleness {
  constructor(
    private readonly pending: PendingApprovals,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  updateContext(): void {
    const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const stale =
      active instanceof vscode.TabInputTextDiff &&
      this.pending.byTarget(active.modified)?.edit?.outdated === true;
    void vscode.commands.executeCommand("setContext", STALE_CONTEXT, stale);
  }

  /**
   * Whether a pending edit of `uri` no longer applies: the file on disk no longer has the bytes
   * the model read (the person typed with autosave on, pressed Save, or another program wrote
   * it). It is not answered No on its own: it stays pending with Accept disabled, and the person
   * is offered to have the edit proposed again on the new bytes, or to reject it with that
   * reason. Bytes back to the base make it apply again.
   */
  async checkStale(uri: vscode.Uri): Promise<boolean> {
    const approvals = this.pending
      .all()
      .filter(
        (approval) =>
          approval.edit && approval.edit.target.toString() === uri.toString(),
      );
    let stale = false;
    for (const approval of approvals) {
      const edit = approval.edit!;
      const bytes = await diskBytes(uri);
      const mismatch = baseMismatch(
        {
          path: vscode.workspace.asRelativePath(uri),
          baseSha256: edit.baseSha256,
        },
        bytes === null ? null : sha256(bytes),
      );
      if (!this.pending.isWaiting(approval)) {
        continue;
      }
      if (!mismatch) {
        if (edit.outdated) {
          edit.outdated = false;
          this.pending.publish(approval, "pending");
          this.updateContext();
        }
        continue;
      }
      stale = true;
      if (edit.outdated) {
        continue;
      }
      edit.outdated = true;
      this.updateContext();
      this.log.info(`${approval.toolCallId}: no longer applies (${mismatch})`);
      void this.offerRepropose(approval, bytes, mismatch);
    }
    return stale;
  }

  /** Says the proposal no longer applies and offers Re-propose (when it can be) or Reject;
   * a notification, so no editor the person is typing in loses focus. */
  async offerRepropose(
    approval: PendingApproval,
    known?: Uint8Array | null,
    mismatch?: string,
  ): Promise<void> {
    const edit = approval.edit;
    if (!edit) {
      return;
    }
    const bytes = known !== undefined ? known : await diskBytes(edit.target);
    const current = bytes === null ? null : new TextDecoder().decode(bytes);
    const repropose = canRepropose(edit.tool, edit.arguments, current);
    const words = outdatedWords(
      approval.subject,
      approval.toolCallId,
      mismatch ??
        `${vscode.workspace.asRelativePath(edit.target)} changed on disk after the model read it.`,
      repropose,
    );
    this.pending.publish(approval, "pending", words.reason);
    const choices = repropose ? ["Re-propose", "Reject"] : ["Reject"];
    const choice = await vscode.window.showWarningMessage(
      words.message,
      ...choices,
    );
    if (choice && !this.pending.isWaiting(approval)) {
      void vscode.window.showInformationMessage(
        lateButtonNotice(
          choice,
          approval.subject,
          approval.toolCallId,
          approval.outcome,
        ),
      );
      return;
    }
    if (choice && !edit.outdated) {
      void vscode.window.showInformationMessage(
        `Counterfoil: ${choice} did nothing: ${approval.subject} (${approval.toolCallId}) applies again as proposed; its diff waits for your answer.`,
      );
      return;
    }
    if (!this.pending.isWaiting(approval) || !edit.outdated) {
      return;
    }
    if (choice === "Re-propose") {
      approval.settle(
        { approved: false, repropose: true },
        "proposed again on the file as it is now",
      );
    } else if (choice === "Reject") {
      approval.settle(
        { approved: false, reason: OUTDATED_REJECTION, cause: "stale" },
        "rejected",
      );
    }
  }
}

// An edit's approval: a diff of the base the model read (read-only, `counterfoil-base:`) against
// the proposed file (editable in memory, `counterfoil-proposal:`, hunks can be dropped). Accept
// sends the kept hunks with what the person typed; a target with unsaved changes is not written.
// After the daemon's receipt names the call and the digest written, the file is shown.

import * as vscode from "vscode";
import type {
  ConfirmParams,
  ConfirmResult,
  EditPreview,
  Receipt,
} from "../daemon/protocol";
import { applyHunks, computeHunks, hunkLabel } from "./hunks";
import { lineEndingNote, restoreLineEndings } from "./lineEndings";
import {
  type EditState,
  type PendingApproval,
  type PendingApprovals,
  STALE_REASON,
} from "./pending";
import { baseMismatch, diffTitle, proposedFileText } from "./proposal";
import {
  BASE_SCHEME,
  BaseDocuments,
  PROPOSAL_SCHEME,
  ProposedFiles,
  sideUri,
} from "./proposalDocuments";
import { diskBytes, type ProposalStaleness, sha256 } from "./staleness";

export class EditReview implements vscode.Disposable {
  readonly bases = new BaseDocuments();
  readonly proposed = new ProposedFiles();
  private readonly disposables: vscode.Disposable[] = [];
  /** How often each call was proposed (a call proposed again gets fresh diff sides). */
  private readonly revisions = new Map<string, number>();
  /** When the person last typed in a workspace file, so a new diff does not take the focus. */
  private lastTyped = 0;
  /** Edits accepted and not yet receipted, by call id: the file and the digest of the text sent. */
  private readonly accepted = new Map<
    string,
    { target: vscode.Uri; sha256: string }
  >();

  constructor(
    private readonly pending: PendingApprovals,
    private readonly staleness: ProposalStaleness,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      this.bases,
      this.proposed,
      vscode.workspace.registerTextDocumentContentProvider(
        BASE_SCHEME,
        this.bases,
      ),
      vscode.workspace.registerFileSystemProvider(
        PROPOSAL_SCHEME,
        this.proposed,
        { isCaseSensitive: true },
      ),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (
          event.document.uri.scheme === "file" &&
          event.contentChanges.length > 0
        ) {
          this.lastTyped = Date.now();
        }
      }),
    );
  }

  /**
   * Accepts a pending edit. One whose target has unsaved changes is not accepted: it stays
   * pending, and the person is told to save or revert first.
   */
  async accept(approval: PendingApproval, edit: EditState): Promise<boolean> {
    const dirty = vscode.workspace.textDocuments.find(
      (document) =>
        document.isDirty && document.uri.toString() === edit.target.toString(),
    );
    if (dirty) {
      const path = vscode.workspace.asRelativePath(edit.target);
      this.log.warn(
        `${approval.toolCallId}: not accepted, ${path} has unsaved changes`,
      );
      void vscode.window.showWarningMessage(
        `Nothing was written: ${path} has unsaved changes. Save or revert them, then Accept again (the proposal is still pending).`,
      );
      return false;
    }
    const wasOutdated = edit.outdated;
    if (await this.staleness.checkStale(edit.target)) {
      if (wasOutdated) {
        void this.staleness.offerRepropose(approval);
      }
      return false;
    }
    const text = this.finalText(edit);
    const modified = text !== edit.proposed;
    approval.settle(
      modified ? { approved: true, text } : { approved: true },
      modified ? "accepted with changes" : "accepted",
    );
    this.accepted.set(approval.toolCallId, {
      target: edit.target,
      sha256: sha256(text),
    });
    return true;
  }

  /** Keeps or drops each hunk (`keep` given, else asked in a multi-select pick). */
  async chooseHunks(
    approval: PendingApproval,
    edit: EditState,
    keep?: boolean[],
  ): Promise<boolean> {
    let chosen = keep;
    if (!chosen) {
      const items = edit.hunks.map((hunk, index) => ({
        label: hunkLabel(hunk),
        detail: [
          ...hunk.removed.map((line) => `− ${line.trimEnd()}`),
          ...hunk.added.map((line) => `+ ${line.trimEnd()}`),
        ]
          .join("  ")
          .slice(0, 200),
        picked: edit.keep[index] !== false,
        index,
      }));
      const picked = await vscode.window.showQuickPick(items, {
        title: `Hunks to keep in ${approval.subject} (${approval.toolCallId})`,
        placeHolder: "Unchecked hunks are dropped from the proposal",
        canPickMany: true,
        ignoreFocusOut: true,
      });
      if (!picked) {
        return false;
      }
      chosen = edit.hunks.map((_, index) =>
        picked.some((item) => item.index === index),
      );
    }
    return this.setHunks(approval, chosen);
  }

  /** Sets which hunks are kept; the proposed side is rewritten to the base plus those hunks. */
  async setHunks(approval: PendingApproval, keep: boolean[]): Promise<boolean> {
    const edit = approval.edit;
    if (!edit || !this.pending.isWaiting(approval)) {
      return false;
    }
    edit.keep = edit.hunks.map((_, index) => keep[index] !== false);
    const text = applyHunks(edit.base, edit.hunks, edit.keep);
    const document = vscode.workspace.textDocuments.find(
      (open) => open.uri.toString() === edit.right.toString(),
    );
    if (!document) {
      this.proposed.set(edit.right, text);
    } else if (document.getText() !== text) {
      const change = new vscode.WorkspaceEdit();
      change.replace(
        edit.right,
        new vscode.Range(
          new vscode.Position(0, 0),
          document.lineAt(document.lineCount - 1).range.end,
        ),
        text,
      );
      await vscode.workspace.applyEdit(change);
      await document.save();
    }
    this.log.info(
      `${approval.toolCallId}: hunks kept ${edit.keep.map((kept) => (kept ? "1" : "0")).join("")}`,
    );
    this.pending.publish(approval, "pending");
    return true;
  }

  async showDiff(approval: PendingApproval, edit: EditState): Promise<boolean> {
    await vscode.commands.executeCommand(
      "vscode.diff",
      edit.left,
      edit.right,
      this.titleWithEndings(
        `${approval.subject} (${approval.toolCallId}): as read ↔ proposed`,
        edit,
      ),
      { preview: false },
    );
    return true;
  }

  async confirm(
    params: ConfirmParams,
    preview: EditPreview,
    token: vscode.CancellationToken,
  ): Promise<ConfirmResult> {
    const refuse = (reason: string): ConfirmResult => {
      this.log.warn(
        `${params.toolCallId} ${params.tool} ${preview.path}: refused (${reason})`,
      );
      void vscode.window.showWarningMessage(
        `Counterfoil rejected ${params.tool} ${preview.path} (${params.toolCallId}): ${reason}`,
      );
      return { approved: false, reason };
    };
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!root) {
      return refuse("no workspace folder is open.");
    }
    const target = vscode.Uri.joinPath(root, preview.path);
    if (
      preview.uri !== undefined &&
      vscode.Uri.parse(preview.uri, true).fsPath !== target.fsPath
    ) {
      return refuse(
        `the edit targets ${preview.uri}, not ${preview.path} in the workspace.`,
      );
    }
    let text: string;
    try {
      text = preview.proposedSha256 === null ? "" : proposedFileText(preview);
    } catch (error) {
      return refuse(`the proposal could not be shown: ${String(error)}`);
    }
    const bytes = await diskBytes(target);
    const changed = baseMismatch(
      preview,
      bytes === null ? null : sha256(bytes),
    );
    if (changed) {
      return refuse(`${STALE_REASON}: ${changed}`);
    }
    if (
      preview.proposedSha256 !== null &&
      sha256(text) !== preview.proposedSha256
    ) {
      return refuse(
        "the proposed text does not match the digest the daemon would write.",
      );
    }
    // The left side is the bytes the model read: the preview's copy, else the disk's, which
    // were just checked against baseSha256.
    const base =
      typeof preview.baseText === "string"
        ? preview.baseText
        : bytes === null
          ? ""
          : new TextDecoder().decode(bytes);
    const revision = (this.revisions.get(params.toolCallId) ?? -1) + 1;
    this.revisions.set(params.toolCallId, revision);
    const left = sideUri(
      BASE_SCHEME,
      preview.path,
      params.toolCallId,
      revision,
    );
    const right = sideUri(
      PROPOSAL_SCHEME,
      preview.path,
      params.toolCallId,
      revision,
    );
    this.bases.set(left, base);
    this.proposed.set(right, text);
    const hunks = computeHunks(base, text);
    const edit: EditState = {
      target,
      base,
      proposed: text,
      hunks,
      keep: hunks.map(() => true),
      baseSha256: preview.baseSha256,
      right,
      left,
      outdated: false,
      tool: params.tool,
      arguments: params.arguments ?? {},
    };
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(root, preview.path),
    );
    const { answer, approval } = this.pending.waitForAnswer(
      params,
      token,
      "edit",
      edit,
    );
    const onDisk = () => void this.staleness.checkStale(target);
    watcher.onDidChange(onDisk);
    watcher.onDidCreate(onDisk);
    watcher.onDidDelete(onDisk);
    const dirty = vscode.workspace.textDocuments.find(
      (document) =>
        document.isDirty && document.uri.toString() === target.toString(),
    );
    if (dirty) {
      void vscode.window.showWarningMessage(
        `${preview.path} has unsaved changes: Accept will write nothing until they are saved or reverted.`,
      );
    }
    const title = this.titleWithEndings(diffTitle(params, preview), edit);
    // Someone typing in a file keeps the focus: the diff opens beside it.
    const typing =
      Date.now() - this.lastTyped < 5_000 &&
      vscode.window.activeTextEditor?.document.uri.scheme === "file";
    try {
      await vscode.commands.executeCommand(
        "vscode.diff",
        left,
        right,
        title,
        typing
          ? {
              preview: false,
              preserveFocus: true,
              viewColumn: vscode.ViewColumn.Beside,
            }
          : { preview: false },
      );
    } catch (error) {
      approval.settle(
        { approved: false },
        `the diff could not be opened: ${String(error)}`,
      );
    }
    const result = await answer;
    watcher.dispose();
    await this.closeDiff(right);
    this.proposed.delete(right);
    this.bases.delete(left);
    return result;
  }

  /**
   * After Accept the daemon writes the file and then records its receipt, which names the call
   * and the digest written: the file is then shown (VS Code reloads an open, clean document by
   * itself), unless the next edit's diff is already waiting (it must stay in front).
   */
  showWritten(receipt: Receipt): void {
    const accepted = this.accepted.get(receipt.tool_call_id);
    if (!accepted) {
      return;
    }
    this.accepted.delete(receipt.tool_call_id);
    if (receipt.result_sha256 !== accepted.sha256) {
      this.log.warn(
        `${receipt.tool_call_id}: the receipt records ${receipt.result_sha256 ?? "no digest"}, not the accepted text's ${accepted.sha256}`,
      );
      return;
    }
    if (this.waitingEdit() === undefined) {
      void vscode.window
        .showTextDocument(accepted.target, { preview: false })
        .then(
          () => {
            // A proposal whose diff opened while the file did goes back in front.
            const next = this.waitingEdit();
            if (next?.edit) void this.showDiff(next, next.edit);
          },
          (error: unknown) =>
            this.log.warn(
              `showing ${accepted.target.fsPath}: ${String(error)}`,
            ),
        );
    }
  }

  private waitingEdit(): PendingApproval | undefined {
    return this.pending.all().find((approval) => approval.edit !== undefined);
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  /** What Accept approves: the kept hunks byte for byte, with only what the person typed in
   * the editor in place of them (its line-ending normalisation is not an edit). */
  private finalText(edit: EditState): string {
    const document = vscode.workspace.textDocuments.find(
      (open) => open.uri.toString() === edit.right.toString(),
    );
    const shown =
      document?.getText() ?? this.proposed.text(edit.right) ?? edit.proposed;
    return restoreLineEndings(
      applyHunks(edit.base, edit.hunks, edit.keep),
      shown,
    );
  }

  /** The diff's title, with what it cannot show: line endings the proposal changes. */
  private titleWithEndings(title: string, edit: EditState): string {
    const note = lineEndingNote(edit.base, edit.proposed);
    return note ? `${title} · ${note}` : title;
  }

  /** Closes an answered proposal's diff, in whichever group it is. */
  private async closeDiff(right: vscode.Uri): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs);
    const open = tabs.filter(
      (tab) =>
        tab.input instanceof vscode.TabInputTextDiff &&
        tab.input.modified.toString() === right.toString(),
    );
    const document = vscode.workspace.textDocuments.find(
      (doc) => doc.uri.toString() === right.toString(),
    );
    // An edited proposal side is saved into memory first, so closing asks nothing.
    if (open.length > 0 && document?.isDirty) {
      await document.save();
    }
    if (open.length > 0) {
      await vscode.window.tabGroups.close(open);
    }
  }
}

// Approvals: an edit is shown as a diff of the base the model read (read-only) against the
// proposed file (editable, hunks can be dropped) with Accept and Reject in the editor title, in
// the run panel and on keys; a command is shown in a modal with its exact argv and cwd and
// exactly Accept and Reject. Anything but an explicit Accept answers No. Work is never lost: a
// target with unsaved changes is not written (the proposal stays pending), and a target that
// changes on disk makes the proposal stale, which answers No at once and says so.

import { createHash } from "node:crypto";
import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import { applyHunks, computeHunks, type Hunk, hunkLabel } from "./hunks";
import { lineEndingNote, restoreLineEndings } from "./lineEndings";
import {
  canRepropose,
  OUTDATED_REJECTION,
  outdatedWords,
} from "./outdatedProposal";
import type {
  CommandPreview,
  ConfirmParams,
  ConfirmResult,
  EditPreview,
  Receipt,
} from "../daemon/protocol";
import {
  baseMismatch,
  commandDetail,
  diffTitle,
  proposalSubject,
  proposedFileText,
} from "./proposal";
import {
  BASE_SCHEME,
  BaseDocuments,
  PROPOSAL_SCHEME,
  ProposedFiles,
  sideUri,
} from "./proposalDocuments";
import type { ProposalView } from "../run/runModel";

export { PROPOSAL_SCHEME } from "./proposalDocuments";
const PENDING_CONTEXT = "counterfoil.approvalPending";
const STALE_CONTEXT = "counterfoil.proposalStale";
export const STALE_REASON = "stale: file changed on disk";

/** The proposed side's URI for a call (kept for callers that know only the path and id). */
export function proposalUri(path: string, toolCallId: string): vscode.Uri {
  return sideUri(PROPOSAL_SCHEME, path, toolCallId);
}

function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The file's bytes, or null when it does not exist. */
async function diskBytes(uri: vscode.Uri): Promise<Uint8Array | null> {
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

interface EditState {
  target: vscode.Uri;
  base: string;
  proposed: string;
  hunks: Hunk[];
  keep: boolean[];
  baseSha256: string | null;
  right: vscode.Uri;
  left: vscode.Uri;
  stale: boolean;
  /** The file changed while the proposal waited: still pending, Accept disabled. */
  outdated: boolean;
  tool: string;
  arguments: Record<string, unknown>;
}

interface PendingApproval {
  toolCallId: string;
  subject: string;
  kind: "edit" | "command";
  edit?: EditState;
  settle(result: ConfirmResult, why: string): void;
}

export class ReviewController implements vscode.Disposable {
  readonly bases = new BaseDocuments();
  readonly proposed = new ProposedFiles();
  private readonly pending = new Map<string, PendingApproval>();
  /** Proposed-side URIs of diffs left open after their proposal went stale. */
  private readonly staleUris = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  /** How often each call was proposed (a call proposed again gets fresh diff sides). */
  private readonly revisions = new Map<string, number>();
  /** When the person last typed in a workspace file, so a new diff does not take the focus. */
  private lastTyped = 0;
  private readonly pendingEmitter = new vscode.EventEmitter<
    string | undefined
  >();
  private readonly proposalEmitter = new vscode.EventEmitter<ProposalView>();
  /** Edits accepted and not yet receipted, by call id: the file and the digest of the text sent. */
  private readonly accepted = new Map<
    string,
    { target: vscode.Uri; sha256: string }
  >();
  /** Fires with what the latest pending approval is about ("edit_file app.py (call-1)"), or undefined when none. */
  readonly onDidChangePending = this.pendingEmitter.event;
  /** Fires whenever a proposal appears or changes state, hunks or text: what the run panel shows. */
  readonly onDidChangeProposal = this.proposalEmitter.event;

  constructor(
    client: DaemonClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    client.handleConfirm((params, token) => this.confirm(params, token));
    const register = (id: string, handler: (...args: unknown[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, handler));
    register("counterfoil.acceptProposal", (target?: unknown) =>
      this.accept(target),
    );
    register(
      "counterfoil.rejectProposal",
      (target?: unknown, reason?: unknown) =>
        this.reject(target, typeof reason === "string" ? reason : undefined),
    );
    register("counterfoil.rejectProposalWithReason", (target?: unknown) =>
      this.rejectWithReason(target),
    );
    register("counterfoil.chooseHunks", (target?: unknown) =>
      this.chooseHunks(target),
    );
    register("counterfoil.showProposal", (target?: unknown) =>
      this.showDiff(target),
    );
    this.disposables.push(
      client.onRunning((running) => {
        if (!running) {
          this.rejectAll("the daemon stopped");
        }
      }),
      client.onReceipt((receipt) => this.showWritten(receipt)),
      this.bases,
      this.proposed,
      this.pendingEmitter,
      this.proposalEmitter,
      vscode.workspace.registerTextDocumentContentProvider(
        BASE_SCHEME,
        this.bases,
      ),
      vscode.workspace.registerFileSystemProvider(
        PROPOSAL_SCHEME,
        this.proposed,
        { isCaseSensitive: true },
      ),
      vscode.window.tabGroups.onDidChangeTabs((event) => {
        for (const tab of event.closed) {
          this.onTabClosed(tab);
        }
        this.updateStaleContext();
      }),
      vscode.window.onDidChangeActiveTextEditor(() =>
        this.updateStaleContext(),
      ),
      vscode.workspace.onDidSaveTextDocument((document) =>
        this.checkStale(document.uri),
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

  /** Tool call ids waiting for an answer, oldest first. */
  get pendingIds(): string[] {
    return [...this.pending.keys()];
  }

  /** Answers a `counterfoil/confirm` request. */
  async confirm(
    params: ConfirmParams,
    token: vscode.CancellationToken,
  ): Promise<ConfirmResult> {
    const preview = params.preview;
    if (preview?.kind === "edit") {
      return this.confirmEdit(params, preview, token);
    }
    if (preview?.kind === "command") {
      return this.confirmCommand(params, preview, token);
    }
    this.log.warn(
      `confirm ${params.toolCallId}: no preview to show; answering No`,
    );
    void vscode.window.showWarningMessage(
      `Counterfoil rejected ${params.tool} (${params.toolCallId}): the daemon sent nothing to review.`,
    );
    return { approved: false };
  }

  /**
   * Accepts the approval for `target` (a proposal URI or call id), else the one whose diff is in
   * front, else the latest. An edit whose target has unsaved changes is not accepted: it stays
   * pending, and the person is told to save or revert first.
   */
  async accept(target?: unknown): Promise<boolean> {
    const approval = this.find(target);
    if (!approval) {
      return this.nothingPending(target);
    }
    const edit = approval.edit;
    if (!edit) {
      approval.settle({ approved: true }, "accepted");
      return true;
    }
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
    if (await this.checkStale(edit.target)) {
      if (wasOutdated) {
        void this.offerRepropose(approval);
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

  reject(target?: unknown, reason?: string): boolean {
    const approval = this.find(target);
    if (!approval) {
      return this.nothingPending(target);
    }
    const trimmed = reason?.trim();
    approval.settle(
      trimmed ? { approved: false, reason: trimmed } : { approved: false },
      "rejected",
    );
    return true;
  }

  /** Asks why, then rejects with that reason (it reaches the model). Escape leaves it pending. */
  async rejectWithReason(target?: unknown, reason?: string): Promise<boolean> {
    const approval = this.find(target);
    if (!approval) {
      return this.nothingPending(target);
    }
    const why =
      reason ??
      (await vscode.window.showInputBox({
        title: `Reject ${approval.subject} (${approval.toolCallId})`,
        prompt: "Why? The model reads this in its observation.",
        placeHolder: "e.g. keep the function name; fix the test instead",
        ignoreFocusOut: true,
      }));
    if (why === undefined) {
      return false;
    }
    return this.reject(approval.toolCallId, why);
  }

  /** Keeps or drops each hunk (`keep` given, else asked in a multi-select pick). */
  async chooseHunks(target?: unknown, keep?: boolean[]): Promise<boolean> {
    const approval = this.find(target);
    const edit = approval?.edit;
    if (!approval || !edit) {
      return this.nothingPending(target);
    }
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
    if (!edit || this.pending.get(approval.toolCallId) !== approval) {
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
    this.publish(approval, "pending");
    return true;
  }

  /** Answers No to everything pending, e.g. when the daemon restarts. */
  rejectAll(reason: string): void {
    for (const approval of [...this.pending.values()]) {
      approval.settle({ approved: false }, reason);
    }
  }

  dispose(): void {
    this.rejectAll("the extension was deactivated");
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private nothingPending(target: unknown): false {
    const uri = this.targetUri(target);
    if (uri && this.staleUris.has(uri.toString())) {
      void vscode.window.showWarningMessage(
        `This proposal is stale: its file changed on disk, so it was answered No. Close the diff.`,
      );
      return false;
    }
    void vscode.window.showInformationMessage(
      "Counterfoil has no proposal waiting for an answer.",
    );
    return false;
  }

  private targetUri(target: unknown): vscode.Uri | undefined {
    if (target instanceof vscode.Uri) {
      return target;
    }
    const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return active instanceof vscode.TabInputTextDiff
      ? active.modified
      : undefined;
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

  private view(
    approval: PendingApproval,
    state: ProposalView["state"],
    reason?: string,
  ): ProposalView {
    const edit = approval.edit;
    return {
      toolCallId: approval.toolCallId,
      subject: approval.subject,
      kind: approval.kind,
      state,
      reason,
      hunks: edit?.hunks.map((hunk, index) => ({
        label: hunkLabel(hunk),
        kept: edit.keep[index] !== false,
      })),
    };
  }

  private publish(
    approval: PendingApproval,
    state: ProposalView["state"],
    reason?: string,
  ): void {
    this.proposalEmitter.fire(this.view(approval, state, reason));
  }

  private pendingChanged(): void {
    const latest = [...this.pending.values()].pop();
    void vscode.commands.executeCommand(
      "setContext",
      PENDING_CONTEXT,
      latest !== undefined,
    );
    this.pendingEmitter.fire(
      latest ? `${latest.subject} (${latest.toolCallId})` : undefined,
    );
  }

  private find(target: unknown): PendingApproval | undefined {
    if (typeof target === "string") {
      return this.pending.get(target);
    }
    if (target instanceof vscode.Uri) {
      return [...this.pending.values()].find(
        (approval) => approval.edit?.right.toString() === target.toString(),
      );
    }
    const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (active instanceof vscode.TabInputTextDiff) {
      if (this.staleUris.has(active.modified.toString())) {
        return undefined;
      }
      const match = this.find(active.modified);
      if (match) {
        return match;
      }
    }
    const all = [...this.pending.values()];
    return all[all.length - 1];
  }

  private onTabClosed(tab: vscode.Tab): void {
    if (
      !(tab.input instanceof vscode.TabInputTextDiff) ||
      tab.input.modified.scheme !== PROPOSAL_SCHEME
    ) {
      return;
    }
    const uri = tab.input.modified;
    if (this.staleUris.delete(uri.toString())) {
      this.proposed.delete(uri);
      return;
    }
    this.find(uri)?.settle({ approved: false }, "the diff was closed");
  }

  private updateStaleContext(): void {
    const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    const stale =
      active instanceof vscode.TabInputTextDiff &&
      (this.staleUris.has(active.modified.toString()) ||
        this.find(active.modified)?.edit?.outdated === true);
    void vscode.commands.executeCommand("setContext", STALE_CONTEXT, stale);
  }

  /**
   * Whether a pending edit of `uri` no longer applies: the file on disk no longer has the bytes
   * the model read (the person typed with autosave on, pressed Save, or another program wrote
   * it). It is not answered No on its own: it stays pending with Accept disabled, and the person
   * is offered to have the edit proposed again on the new bytes, or to reject it with that
   * reason. Bytes back to the base make it apply again.
   */
  private async checkStale(uri: vscode.Uri): Promise<boolean> {
    const approvals = [...this.pending.values()].filter(
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
      if (this.pending.get(approval.toolCallId) !== approval) {
        continue;
      }
      if (!mismatch) {
        if (edit.outdated) {
          edit.outdated = false;
          this.publish(approval, "pending");
          this.updateStaleContext();
        }
        continue;
      }
      stale = true;
      if (edit.outdated) {
        continue;
      }
      edit.outdated = true;
      this.updateStaleContext();
      this.log.info(`${approval.toolCallId}: no longer applies (${mismatch})`);
      void this.offerRepropose(approval, bytes, mismatch);
    }
    return stale;
  }

  /** Says the proposal no longer applies and offers Re-propose (when it can be) or Reject;
   * a notification, so no editor the person is typing in loses focus. */
  private async offerRepropose(
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
    this.publish(approval, "pending", words.reason);
    const choices = repropose ? ["Re-propose", "Reject"] : ["Reject"];
    const choice = await vscode.window.showWarningMessage(
      words.message,
      ...choices,
    );
    if (this.pending.get(approval.toolCallId) !== approval || !edit.outdated) {
      return;
    }
    if (choice === "Re-propose") {
      approval.settle(
        { approved: false, repropose: true },
        "proposed again on the file as it is now",
      );
    } else if (choice === "Reject") {
      approval.settle(
        { approved: false, reason: OUTDATED_REJECTION },
        "rejected",
      );
    }
  }

  async showDiff(target?: unknown): Promise<boolean> {
    const approval = this.find(target);
    const edit = approval?.edit;
    if (!approval || !edit) {
      return false;
    }
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

  /**
   * Registers an approval and resolves with the answer: Accept, Reject, closing, going stale,
   * the daemon withdrawing the request (its confirm timeout, a cancelled run), or a restart. Only
   * Accept resolves approved. The daemon keeps the only timer.
   */
  private waitForAnswer(
    params: ConfirmParams,
    token: vscode.CancellationToken,
    kind: "edit" | "command",
    edit?: EditState,
  ): { answer: Promise<ConfirmResult>; approval: PendingApproval } {
    let resolve!: (result: ConfirmResult) => void;
    const answer = new Promise<ConfirmResult>((done) => {
      resolve = done;
    });
    const subject = proposalSubject(params);
    const cancellation = token.onCancellationRequested(() =>
      approval.settle({ approved: false }, "the daemon withdrew the request"),
    );
    const approval: PendingApproval = {
      toolCallId: params.toolCallId,
      subject,
      kind,
      edit,
      settle: (result, why) => {
        if (this.pending.get(params.toolCallId) !== approval) {
          return;
        }
        this.pending.delete(params.toolCallId);
        cancellation.dispose();
        this.pendingChanged();
        this.log.info(
          `${params.toolCallId} ${subject}: ${result.approved ? "approved" : "not approved"} (${why}${result.reason && why !== result.reason ? `: ${result.reason}` : ""})`,
        );
        const state = result.approved
          ? "approved"
          : why === STALE_REASON || result.repropose
            ? "stale"
            : "rejected";
        const shown = this.view(
          approval,
          state,
          result.reason ??
            (why === "rejected" || why.startsWith("accepted")
              ? undefined
              : why),
        );
        if (result.approved && result.text !== undefined) {
          shown.edited = true;
        }
        this.proposalEmitter.fire(shown);
        if (
          !result.approved &&
          why !== "rejected" &&
          why !== STALE_REASON &&
          !result.repropose
        ) {
          void vscode.window.showWarningMessage(
            `Counterfoil rejected ${subject} (${params.toolCallId}): ${why}.`,
          );
        }
        resolve(result);
      },
    };
    this.pending
      .get(params.toolCallId)
      ?.settle({ approved: false }, "the daemon asked again");
    this.pending.set(params.toolCallId, approval);
    this.pendingChanged();
    this.publish(approval, "pending");
    if (token.isCancellationRequested) {
      approval.settle({ approved: false }, "the daemon withdrew the request");
    }
    return { answer, approval };
  }

  private async confirmEdit(
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
      stale: false,
      outdated: false,
      tool: params.tool,
      arguments: params.arguments ?? {},
    };
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(root, preview.path),
    );
    const { answer, approval } = this.waitForAnswer(
      params,
      token,
      "edit",
      edit,
    );
    const onDisk = () => void this.checkStale(target);
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
    if (!edit.stale) {
      await this.closeDiff(right);
      this.proposed.delete(right);
    }
    this.bases.delete(left);
    return result;
  }

  private async confirmCommand(
    params: ConfirmParams,
    preview: CommandPreview,
    token: vscode.CancellationToken,
  ): Promise<ConfirmResult> {
    const { answer, approval } = this.waitForAnswer(params, token, "command");
    const settleWith = (choice: vscode.MessageItem | undefined) =>
      choice?.title === "Accept"
        ? approval.settle({ approved: true }, "accepted")
        : approval.settle({ approved: false }, "rejected");
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
        this.log.warn(
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

  private async closeDiff(right: vscode.Uri): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs);
    const open = tabs.filter(
      (tab) =>
        tab.input instanceof vscode.TabInputTextDiff &&
        tab.input.modified.toString() === right.toString(),
    );
    for (const tab of open) {
      const input = tab.input as vscode.TabInputTextDiff;
      const document = vscode.workspace.textDocuments.find(
        (doc) => doc.uri.toString() === input.modified.toString(),
      );
      // An edited proposal side is saved into memory first, so closing asks nothing.
      if (document?.isDirty) {
        await document.save();
      }
    }
    if (open.length > 0) {
      await vscode.window.tabGroups.close(open);
    }
  }

  /**
   * After Accept the daemon writes the file and then records its receipt, which names the call
   * and the digest written: the file is then shown (VS Code reloads an open, clean document by
   * itself), unless the next edit's diff is already waiting (it must stay in front).
   */
  private showWritten(receipt: Receipt): void {
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
    if (
      ![...this.pending.values()].some(
        (approval) => approval.edit !== undefined,
      )
    ) {
      void vscode.window
        .showTextDocument(accepted.target, { preview: false })
        .then(undefined, (error: unknown) =>
          this.log.warn(`showing ${accepted.target.fsPath}: ${String(error)}`),
        );
    }
  }
}

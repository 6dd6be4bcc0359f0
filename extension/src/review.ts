// Approvals: an edit is shown as a diff of the current file against a read-only proposal
// document with Accept and Reject in the editor title; a command is shown in a modal with its
// exact argv and cwd. Anything but an explicit Accept answers No. The controller answers the
// client's `counterfoil/confirm` and registers its own Accept and Reject commands.

import { createHash } from "node:crypto";
import * as vscode from "vscode";
import type { DaemonClient } from "./client";
import type {
  CommandPreview,
  ConfirmParams,
  ConfirmResult,
  EditPreview,
} from "./protocol";
import {
  baseMismatch,
  commandDetail,
  diffTitle,
  proposalSubject,
  proposedFileText,
} from "./proposal";

export const PROPOSAL_SCHEME = "counterfoil-proposal";
const PENDING_CONTEXT = "counterfoil.approvalPending";

/** Read-only documents holding proposed file contents, keyed by URI. */
export class ProposalDocuments
  implements vscode.TextDocumentContentProvider, vscode.Disposable
{
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  delete(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The proposal document's URI: keeps the file name (for highlighting) and the call id. */
export function proposalUri(
  path: string,
  toolCallId: string,
  side: "proposed" | "empty" = "proposed",
): vscode.Uri {
  return vscode.Uri.from({
    scheme: PROPOSAL_SCHEME,
    path: `/${path.replace(/^\/+/, "")}`,
    query: `call=${encodeURIComponent(toolCallId)}&side=${side}`,
  });
}

function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** SHA-256 of the file's bytes, or null when it does not exist. */
async function diskSha256(uri: vscode.Uri): Promise<string | null> {
  try {
    return sha256(await vscode.workspace.fs.readFile(uri));
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

interface PendingApproval {
  toolCallId: string;
  subject: string;
  /** The proposal side of the diff, for edits. */
  documentUri?: vscode.Uri;
  settle(approved: boolean, reason: string): void;
}

export class ReviewController implements vscode.Disposable {
  readonly documents = new ProposalDocuments();
  private readonly pending = new Map<string, PendingApproval>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly pendingEmitter = new vscode.EventEmitter<
    string | undefined
  >();
  /** Fires with what the latest pending approval is about ("edit_file app.py (call-1)"), or undefined when none. */
  readonly onDidChangePending = this.pendingEmitter.event;

  constructor(
    client: DaemonClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    client.handleConfirm((params, token) => this.confirm(params, token));
    this.disposables.push(
      vscode.commands.registerCommand(
        "counterfoil.acceptProposal",
        (target?: unknown) => this.accept(target),
      ),
      vscode.commands.registerCommand(
        "counterfoil.rejectProposal",
        (target?: unknown) => this.reject(target),
      ),
      client.onRunning((running) => {
        if (!running) {
          this.rejectAll("the daemon stopped");
        }
      }),
      this.documents,
      this.pendingEmitter,
      vscode.workspace.registerTextDocumentContentProvider(
        PROPOSAL_SCHEME,
        this.documents,
      ),
      vscode.window.tabGroups.onDidChangeTabs((event) => {
        for (const tab of event.closed) {
          this.onTabClosed(tab);
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
      return { approved: await this.confirmEdit(params, preview, token) };
    }
    if (preview?.kind === "command") {
      return { approved: await this.confirmCommand(params, preview, token) };
    }
    this.log.warn(
      `confirm ${params.toolCallId}: no preview to show; answering No`,
    );
    void vscode.window.showWarningMessage(
      `Counterfoil rejected ${params.tool} (${params.toolCallId}): the daemon sent nothing to review.`,
    );
    return { approved: false };
  }

  /** Accepts the approval for `target` (a proposal URI or call id), else the only or latest one. */
  accept(target?: unknown): boolean {
    return this.answer(target, true, "accepted");
  }

  reject(target?: unknown): boolean {
    return this.answer(target, false, "rejected");
  }

  /** Answers No to everything pending, e.g. when the daemon restarts. */
  rejectAll(reason: string): void {
    for (const approval of [...this.pending.values()]) {
      approval.settle(false, reason);
    }
  }

  dispose(): void {
    this.rejectAll("the extension was deactivated");
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
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

  private answer(target: unknown, approved: boolean, reason: string): boolean {
    const approval = this.find(target);
    if (!approval) {
      void vscode.window.showInformationMessage(
        "Counterfoil has no proposal waiting for an answer.",
      );
      return false;
    }
    approval.settle(approved, reason);
    return true;
  }

  private find(target: unknown): PendingApproval | undefined {
    if (typeof target === "string") {
      return this.pending.get(target);
    }
    if (target instanceof vscode.Uri) {
      return [...this.pending.values()].find(
        (approval) => approval.documentUri?.toString() === target.toString(),
      );
    }
    const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    if (active instanceof vscode.TabInputTextDiff) {
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
    const approval = this.find(tab.input.modified);
    approval?.settle(false, "the diff was closed");
  }

  /**
   * Registers an approval and resolves with the answer: Accept, Reject, closing, the daemon
   * withdrawing the request (its confirm timeout, a cancelled run), or a restart. Only Accept
   * resolves true. The daemon keeps the only timer.
   */
  private waitForAnswer(
    params: ConfirmParams,
    token: vscode.CancellationToken,
    documentUri?: vscode.Uri,
  ): { answer: Promise<boolean>; approval: PendingApproval } {
    let resolve!: (approved: boolean) => void;
    const answer = new Promise<boolean>((done) => {
      resolve = done;
    });
    const subject = proposalSubject(params);
    const cancellation = token.onCancellationRequested(() =>
      approval.settle(false, "the daemon withdrew the request"),
    );
    const approval: PendingApproval = {
      toolCallId: params.toolCallId,
      subject,
      documentUri,
      settle: (approved, reason) => {
        if (this.pending.get(params.toolCallId) !== approval) {
          return;
        }
        this.pending.delete(params.toolCallId);
        cancellation.dispose();
        this.pendingChanged();
        this.log.info(
          `${params.toolCallId} ${subject}: ${approved ? "approved" : "not approved"} (${reason})`,
        );
        if (!approved && reason !== "rejected") {
          void vscode.window.showWarningMessage(
            `Counterfoil rejected ${subject} (${params.toolCallId}): ${reason}.`,
          );
        }
        resolve(approved);
      },
    };
    this.pending
      .get(params.toolCallId)
      ?.settle(false, "the daemon asked again");
    this.pending.set(params.toolCallId, approval);
    this.pendingChanged();
    if (token.isCancellationRequested) {
      approval.settle(false, "the daemon withdrew the request");
    }
    return { answer, approval };
  }

  private async confirmEdit(
    params: ConfirmParams,
    preview: EditPreview,
    token: vscode.CancellationToken,
  ): Promise<boolean> {
    const refuse = (reason: string): false => {
      this.log.warn(
        `${params.toolCallId} ${params.tool} ${preview.path}: refused (${reason})`,
      );
      void vscode.window.showWarningMessage(
        `Counterfoil rejected ${params.tool} ${preview.path} (${params.toolCallId}): ${reason}`,
      );
      return false;
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
    const dirty = vscode.workspace.textDocuments.find(
      (document) =>
        document.isDirty && document.uri.toString() === target.toString(),
    );
    if (dirty) {
      return refuse(
        `${preview.path} has unsaved changes in the editor. Save or revert them, then ask again.`,
      );
    }
    let text: string;
    try {
      text = proposedFileText(preview);
    } catch (error) {
      return refuse(`the proposal could not be shown: ${String(error)}`);
    }
    const changed = baseMismatch(preview, await diskSha256(target));
    if (changed) {
      return refuse(changed);
    }
    if (sha256(text) !== preview.proposedSha256) {
      return refuse(
        "the proposed text does not match the digest the daemon would write.",
      );
    }
    const createsFile = preview.baseSha256 === null;

    const right = proposalUri(preview.path, params.toolCallId);
    const left = createsFile
      ? proposalUri(preview.path, params.toolCallId, "empty")
      : target;
    this.documents.set(right, text);
    if (createsFile) {
      this.documents.set(left, "");
    }
    const { answer, approval } = this.waitForAnswer(params, token, right);
    const title = diffTitle(params, preview);
    const showDiff = () =>
      vscode.commands.executeCommand("vscode.diff", left, right, title, {
        preview: false,
      });
    try {
      await showDiff();
    } catch (error) {
      approval.settle(false, `the diff could not be opened: ${String(error)}`);
    }
    const fallback = this.offerWhileHidden(approval, right, showDiff);

    const approved = await answer;
    fallback.dispose();
    await this.closeDiff(right);
    this.documents.delete(right);
    this.documents.delete(left);
    if (approved) {
      void this.revealWhenWritten(target, preview.proposedSha256);
    }
    return approved;
  }

  /**
   * While the diff is not in front (never shown, or the person moved to another editor), offers
   * Accept and Reject in a notification, once each time it goes to the background.
   */
  private offerWhileHidden(
    approval: PendingApproval,
    right: vscode.Uri,
    showDiff: () => Thenable<unknown>,
  ): vscode.Disposable {
    let offered = false;
    const diffInFront = () =>
      vscode.window.tabGroups.all.some(
        (group) =>
          group.activeTab?.input instanceof vscode.TabInputTextDiff &&
          group.activeTab.input.modified.toString() === right.toString(),
      );
    const offer = () => {
      if (
        offered ||
        diffInFront() ||
        this.pending.get(approval.toolCallId) !== approval
      ) {
        return;
      }
      offered = true;
      void vscode.window
        .showInformationMessage(
          `Counterfoil proposes ${approval.subject} (${approval.toolCallId}); its diff is not in front.`,
          "Accept",
          "Reject",
          "Show Diff",
        )
        .then((choice) => {
          offered = false;
          if (!choice) {
            return;
          }
          if (this.pending.get(approval.toolCallId) !== approval) {
            // VS Code cannot withdraw a notification; say why its button no longer does anything.
            void vscode.window.showInformationMessage(
              `${approval.subject} (${approval.toolCallId}) was already answered.`,
            );
          } else if (choice === "Show Diff") {
            void showDiff();
          } else {
            approval.settle(
              choice === "Accept",
              choice === "Accept" ? "accepted" : "rejected",
            );
          }
        });
    };
    offer();
    return vscode.window.tabGroups.onDidChangeTabs(offer);
  }

  private async confirmCommand(
    params: ConfirmParams,
    preview: CommandPreview,
    token: vscode.CancellationToken,
  ): Promise<boolean> {
    const { answer, approval } = this.waitForAnswer(params, token);
    const settleWith = (choice: string | undefined) =>
      approval.settle(
        choice === "Accept",
        choice === "Accept" ? "accepted" : "rejected",
      );
    const question = `Counterfoil wants to run a command (${params.toolCallId})`;
    vscode.window
      .showWarningMessage(
        question,
        { modal: true, detail: commandDetail(preview) },
        "Accept",
        "Reject",
      )
      .then(settleWith, (error: unknown) => {
        // The workbench may refuse modals (e.g. under test); ask in a notification instead.
        this.log.warn(
          `${params.toolCallId}: no modal (${String(error)}); asking in a notification`,
        );
        void vscode.window
          .showWarningMessage(
            `${question}: ${commandDetail(preview).split("\n").slice(0, 2).join(", ")}`,
            "Accept",
            "Reject",
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
    if (open.length > 0) {
      await vscode.window.tabGroups.close(open);
    }
  }

  /**
   * After Accept the daemon writes the file; show it once the bytes on disk are the approved
   * ones, unless the next edit's diff is already waiting (it must stay in front).
   */
  private async revealWhenWritten(
    target: vscode.Uri,
    digest: string,
  ): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      try {
        if ((await diskSha256(target)) === digest) {
          if (
            ![...this.pending.values()].some(
              (approval) => approval.documentUri !== undefined,
            )
          ) {
            await vscode.window.showTextDocument(target, { preview: false });
          }
          return;
        }
      } catch (error) {
        this.log.warn(`showing ${target.fsPath}: ${String(error)}`);
        return;
      }
      await new Promise((done) => setTimeout(done, 100));
    }
    this.log.warn(
      `${target.fsPath} did not reach the approved content within 15 s`,
    );
  }
}

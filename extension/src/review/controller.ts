// Approvals: an edit is shown as a diff of the base the model read (read-only) against the
// proposed file (editable, hunks can be dropped) with Accept and Reject in the editor title, in
// the run panel and on keys; a command is asked in the run panel and a notification with its
// exact argv and cwd (Accept, Reject, Reject with Reason), never a modal, so Pause and Stop stay
// at hand. Only an explicit Accept approves; closing a question answers nothing. Work is never lost: a
// target with unsaved changes is not written (the proposal stays pending), and a target that
// changes on disk keeps the proposal pending, says it no longer applies and offers Re-propose.
// An answered proposal's diff closes with its answer.
// A change set (a command's revert, a reviewed command's changes) is one multi-file diff.
// An MCP tool's definition (before its first use) and each MCP call are asked as a command is.
// The parts: pending.ts (waiting approvals), edit.ts (diffs), command.ts (a command's question,
// and an MCP one: mcpProposal.ts has their words),
// changeSet.ts (multi-file diffs), staleness.ts (files changed on disk); this controller
// routes requests and commands to them.

import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import type { ConfirmParams, ConfirmResult } from "../daemon/protocol";
import { CHANGES_SCHEME, ChangeSetReview } from "./changeSet";
import { confirmCommand, confirmMcp } from "./command";
import { EditReview } from "./edit";
import {
  DAEMON_STOPPED,
  type PendingApproval,
  PendingApprovals,
} from "./pending";
import { callOfQuery } from "./proposal";
import { PROPOSAL_SCHEME } from "./proposalDocuments";
import { ProposalStaleness } from "./staleness";
import { commandRegistrar } from "../commandRegistrar";

export { PROPOSAL_SCHEME } from "./proposalDocuments";
export { STALE_REASON } from "./pending";

export class ReviewController implements vscode.Disposable {
  private readonly pending: PendingApprovals;
  private readonly staleness: ProposalStaleness;
  private readonly edits: EditReview;
  private readonly changeSets: ChangeSetReview;
  private readonly disposables: vscode.Disposable[] = [];
  /** Fires with what the latest pending approval is about ("edit_file app.py (call-1)"), or undefined when none. */
  readonly onDidChangePending: vscode.Event<string | undefined>;
  /** Fires whenever a proposal appears or changes state, hunks or text: what the run panel shows. */
  readonly onDidChangeProposal: PendingApprovals["onDidChangeProposal"];

  constructor(
    client: DaemonClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.pending = new PendingApprovals(log);
    this.staleness = new ProposalStaleness(this.pending, log);
    this.edits = new EditReview(this.pending, this.staleness, log);
    this.changeSets = new ChangeSetReview(this.pending, log);
    this.onDidChangePending = this.pending.onDidChangePending;
    this.onDidChangeProposal = this.pending.onDidChangeProposal;
    client.handleConfirm((params, token) => this.confirm(params, token));
    this.disposables.push(
      client.onApprovalState((state) => this.pending.told(state)),
    );
    const register = commandRegistrar(this.disposables);
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
          // Not a rejection: the run was interrupted, and Resume asks again. Nothing is
          // answered: the daemon is going, and a No would be recorded as the person's.
          this.pending.abandonAll(DAEMON_STOPPED);
        }
      }),
      client.onReceipt((receipt) => this.edits.showWritten(receipt)),
      this.edits,
      this.changeSets,
      this.pending,
      vscode.window.tabGroups.onDidChangeTabs((event) => {
        for (const tab of event.closed) {
          this.onTabClosed(tab);
        }
        this.staleness.updateContext();
      }),
      vscode.window.onDidChangeActiveTextEditor(() =>
        this.staleness.updateContext(),
      ),
      vscode.workspace.onDidSaveTextDocument(
        (document) => void this.staleness.checkStale(document.uri),
      ),
    );
  }

  /** Tool call ids waiting for an answer, oldest first. */
  get pendingIds(): string[] {
    return this.pending.ids;
  }

  /** Answers a `counterfoil/confirm` request. */
  async confirm(
    params: ConfirmParams,
    token: vscode.CancellationToken,
  ): Promise<ConfirmResult> {
    const preview = params.preview;
    if (preview?.kind === "edit") {
      return this.edits.confirm(params, preview, token);
    }
    if (preview?.kind === "command") {
      return confirmCommand(this.pending, params, preview, token, (id) =>
        this.rejectWithReason(id),
      );
    }
    if (preview?.kind === "changes") {
      return this.changeSets.confirm(params, preview, token);
    }
    if (preview?.kind === "mcp_definition" || preview?.kind === "mcp_call") {
      return confirmMcp(this.pending, params, preview, token, (id) =>
        this.rejectWithReason(id),
      );
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
      return this.nothingPending();
    }
    const edit = approval.edit;
    if (!edit) {
      approval.settle({ approved: true }, "accepted");
      return true;
    }
    return this.edits.accept(approval, edit);
  }

  reject(target?: unknown, reason?: string): boolean {
    const approval = this.find(target);
    if (!approval) {
      return this.nothingPending();
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
      return this.nothingPending();
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
      return this.nothingPending();
    }
    return this.edits.chooseHunks(approval, edit, keep);
  }

  /** Sets which hunks are kept; the proposed side is rewritten to the base plus those hunks. */
  async setHunks(approval: PendingApproval, keep: boolean[]): Promise<boolean> {
    return this.edits.setHunks(approval, keep);
  }

  async showDiff(target?: unknown): Promise<boolean> {
    const approval = this.find(target);
    if (approval?.kind === "changes") {
      return this.changeSets.showDiff(approval.toolCallId);
    }
    const edit = approval?.edit;
    if (!approval || !edit) {
      return false;
    }
    return this.edits.showDiff(approval, edit);
  }

  /** A reload or a closed window: nothing pending is answered; the run stays resumable. */
  dispose(): void {
    this.pending.abandonAll("the window is closing");
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private nothingPending(): false {
    void vscode.window.showInformationMessage(
      "Counterfoil has no proposal waiting for an answer.",
    );
    return false;
  }

  /** A call id or a proposal URI names its approval; else the diff in front, else the latest. */
  private find(target: unknown): PendingApproval | undefined {
    if (target instanceof vscode.Uri && target.scheme === CHANGES_SCHEME) {
      const call = callOfQuery(target.query);
      return call ? this.pending.byTarget(call) : undefined;
    }
    // A multi-file diff's title bar passes its own resource: not a proposal's, so the
    // approval is found from the tab in front, as for no target.
    const ours =
      !(target instanceof vscode.Uri) || target.scheme === PROPOSAL_SCHEME;
    if (ours && (typeof target === "string" || target instanceof vscode.Uri)) {
      return this.pending.byTarget(target);
    }
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const active = tab?.input;
    if (active instanceof vscode.TabInputTextDiff) {
      const call =
        active.modified.scheme === CHANGES_SCHEME
          ? callOfQuery(active.modified.query)
          : undefined;
      const match = this.pending.byTarget(call ?? active.modified);
      if (match) {
        return match;
      }
    }
    const shownSet = this.changeSets.callShownAs(tab?.label);
    if (shownSet) {
      return this.pending.byTarget(shownSet);
    }
    if (!ours) {
      return undefined; // another diff's title bar: never the latest proposal by default
    }
    const all = this.pending.all();
    return all[all.length - 1];
  }

  private onTabClosed(tab: vscode.Tab): void {
    if (
      !(tab.input instanceof vscode.TabInputTextDiff) ||
      tab.input.modified.scheme !== PROPOSAL_SCHEME
    ) {
      return;
    }
    this.find(tab.input.modified)?.settle(
      { approved: false, cause: "closed" },
      "the diff was closed",
    );
  }
}

// The approvals waiting for an answer, by call id: how one is registered, found, shown to the run
// panel and settled. Only an explicit Accept settles approved; everything else answers No.

import * as vscode from "vscode";
import type {
  ApprovalState,
  ConfirmParams,
  ConfirmResult,
} from "../daemon/protocol";
import type { ProposalState, ProposalView } from "../run/runModel";
import { type Hunk, hunkLabel } from "./hunks";
import { proposalSubject } from "./proposal";

const PENDING_CONTEXT = "counterfoil.approvalPending";
export const STALE_REASON = "stale: file changed on disk";
/** Why an answer went unsent: the daemon stopped; the proposal is interrupted, not rejected. */
export const DAEMON_STOPPED = "the daemon stopped";
/** The daemon took its question back (a pause, Stop, its timeout): withdrawn, never rejected. */
export const WITHDRAWN = "withdrawn by the daemon; nothing was answered";

export interface EditState {
  target: vscode.Uri;
  base: string;
  proposed: string;
  hunks: Hunk[];
  keep: boolean[];
  baseSha256: string | null;
  right: vscode.Uri;
  left: vscode.Uri;
  /** The file changed while the proposal waited: still pending, Accept disabled. */
  outdated: boolean;
  tool: string;
  arguments: Record<string, unknown>;
}

export interface PendingApproval {
  toolCallId: string;
  subject: string;
  kind: ProposalView["kind"];
  edit?: EditState;
  /** What became of it once it no longer waits: what a late button says (`asked again`: the
   * daemon withdrew it and asks the same call again, a newer question). */
  outcome?: ProposalState | "asked again";
  /** The daemon's word on the question ("proposed before your message"), shown while it waits. */
  note?: string;
  /** The whole of what is asked, when the subject cannot hold it (an MCP call's arguments). */
  detail?: string;
  settle(result: ConfirmResult, why: string): void;
}

export class PendingApprovals implements vscode.Disposable {
  private readonly pending = new Map<string, PendingApproval>();
  /** Every question asked for a call id in this window, latest last: a late button's. */
  private readonly asked = new Map<string, PendingApproval[]>();
  private readonly cancellations = new Map<
    PendingApproval,
    vscode.Disposable
  >();
  private readonly pendingEmitter = new vscode.EventEmitter<
    string | undefined
  >();
  private readonly proposalEmitter = new vscode.EventEmitter<ProposalView>();
  /** Fires with what the latest pending approval is about ("edit_file app.py (call-1)"), or undefined when none. */
  readonly onDidChangePending = this.pendingEmitter.event;
  /** Fires whenever a proposal appears or changes state, hunks or text: what the run panel shows. */
  readonly onDidChangeProposal = this.proposalEmitter.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Tool call ids waiting for an answer, oldest first. */
  get ids(): string[] {
    return [...this.pending.keys()];
  }

  /** The approvals waiting, oldest first. */
  all(): PendingApproval[] {
    return [...this.pending.values()];
  }

  /** Whether `approval` is still the one waiting for its call (not settled, not asked again). */
  isWaiting(approval: PendingApproval): boolean {
    return this.pending.get(approval.toolCallId) === approval;
  }

  /** The approval for a call id, or for the proposed side of its diff. */
  byTarget(target: string | vscode.Uri): PendingApproval | undefined {
    if (typeof target === "string") {
      return this.pending.get(target);
    }
    return [...this.pending.values()].find(
      (approval) => approval.edit?.right.toString() === target.toString(),
    );
  }

  /**
   * Leaves everything pending unanswered, for good: the daemon stopped or the extension is
   * going away (a reload, a closed window, a restart). No answer is sent — a No here would be
   * recorded as the person's — and the panel shows the proposal interrupted; the daemon keeps
   * the run resumable, and Resume asks again.
   */
  abandonAll(reason: string): void {
    const abandoned = [...this.pending.values()];
    for (const approval of abandoned) {
      this.pending.delete(approval.toolCallId);
      approval.outcome = "interrupted";
      this.cancellations.get(approval)?.dispose();
      this.cancellations.delete(approval);
      this.log.info(
        `${approval.toolCallId} ${approval.subject}: left unanswered (${reason})`,
      );
      this.proposalEmitter.fire(this.view(approval, "interrupted", reason));
    }
    this.pendingChanged();
    closeDiffsOf(abandoned);
  }

  /**
   * Where a call's question stands, as the daemon says it (`counterfoil/approvalState`): each
   * earlier question for that call that no longer waits takes it as its outcome, so a late
   * button says the daemon's state (asked again, withdrawn), not a guess of its own.
   */
  told(state: ApprovalState): void {
    const asked = this.asked.get(state.toolCallId) ?? [];
    for (const approval of asked) {
      if (this.isWaiting(approval)) {
        continue;
      }
      if (state.state === "answered") {
        // A person's answer keeps its own words (accepted, rejected, stale); an earlier
        // question of the call takes the answer of the one asked again.
        if (approval.outcome === "asked again") {
          approval.outcome = asked[asked.length - 1].outcome;
        }
        continue;
      }
      approval.outcome =
        state.state === "pending"
          ? "asked again"
          : state.state === "denied"
            ? "rejected"
            : state.state;
    }
  }

  publish(
    approval: PendingApproval,
    state: ProposalView["state"],
    reason?: string,
  ): void {
    this.proposalEmitter.fire(this.view(approval, state, reason));
  }

  /**
   * Registers an approval and resolves with the answer: Accept, Reject, closing, going stale,
   * the daemon withdrawing the request (its confirm timeout, a cancelled run), or a restart. Only
   * Accept resolves approved. The daemon keeps the only timer.
   */
  waitForAnswer(
    params: ConfirmParams,
    token: vscode.CancellationToken,
    kind: ProposalView["kind"],
    edit?: EditState,
    detail?: string,
  ): { answer: Promise<ConfirmResult>; approval: PendingApproval } {
    let resolve!: (result: ConfirmResult) => void;
    const answer = new Promise<ConfirmResult>((done) => {
      resolve = done;
    });
    const subject = proposalSubject(params);
    const cancellation = token.onCancellationRequested(() =>
      approval.settle({ approved: false }, WITHDRAWN),
    );
    const approval: PendingApproval = {
      toolCallId: params.toolCallId,
      subject,
      kind,
      edit,
      note: params.note ?? undefined,
      detail,
      settle: (result, why) => {
        if (this.pending.get(params.toolCallId) !== approval) {
          return;
        }
        this.pending.delete(params.toolCallId);
        cancellation.dispose();
        this.cancellations.delete(approval);
        this.pendingChanged();
        this.log.info(
          `${params.toolCallId} ${subject}: ${result.approved ? "approved" : "not approved"} (${why}${result.reason && why !== result.reason ? `: ${result.reason}` : ""})`,
        );
        const state = result.approved
          ? "approved"
          : why === STALE_REASON || result.repropose
            ? "stale"
            : why === WITHDRAWN
              ? "interrupted"
              : "rejected";
        approval.outcome = state;
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
          why !== WITHDRAWN && // the daemon's answer is in the panel: no toast says "rejected"
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
    this.asked.set(params.toolCallId, [
      ...(this.asked.get(params.toolCallId) ?? []).slice(-4),
      approval,
    ]);
    this.cancellations.set(approval, cancellation);
    this.pendingChanged();
    this.publish(approval, "pending");
    if (token.isCancellationRequested) {
      approval.settle({ approved: false }, WITHDRAWN);
    }
    return { answer, approval };
  }

  dispose(): void {
    this.pendingEmitter.dispose();
    this.proposalEmitter.dispose();
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
      detail: approval.detail,
      reason: reason ?? (state === "pending" ? approval.note : undefined),
      hunks: edit?.hunks.map((hunk, index) => ({
        label: hunkLabel(hunk),
        kept: edit.keep[index] !== false,
      })),
      outdated: state === "pending" && edit?.outdated === true,
    };
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
}

/**
 * Closes the diffs of proposals left unanswered: nothing can be accepted there any more, and
 * Resume opens them again. They are no longer pending, so closing them answers nothing.
 */
function closeDiffsOf(abandoned: readonly PendingApproval[]): void {
  const proposed = new Set(
    abandoned.flatMap((approval) =>
      approval.edit ? [approval.edit.right.toString()] : [],
    ),
  );
  const open = vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter(
      (tab) =>
        tab.input instanceof vscode.TabInputTextDiff &&
        proposed.has(tab.input.modified.toString()),
    );
  if (open.length > 0) {
    void vscode.window.tabGroups.close(open).then(undefined, () => undefined);
  }
}

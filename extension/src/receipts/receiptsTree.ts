// The receipts view: one node per receipt, live on `counterfoil/receipt`, with a warning node
// when the log is broken. It registers its own view and listens to the client itself. Node
// shapes come from receiptNodes.ts.

import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import type {
  ApprovalState,
  Receipt,
  ReceiptsResult,
  RunRecord,
  StoredRunRecord,
  VerifyResult,
} from "../daemon/protocol";
import {
  liveRunRecord,
  type ReceiptNode,
  receiptRoots,
  withLiveRuns,
} from "./receiptNodes";
import { type VerifyFinding, verifyFinding } from "./verifyReport";

export class ReceiptsTree
  implements vscode.TreeDataProvider<ReceiptNode>, vscode.Disposable
{
  private receipts: Receipt[] = [];
  private loadProblem: string | null = null;
  private verifyProblem: VerifyFinding | null = null;
  private path: string | null = null;
  private runs: RunRecord[] = [];
  /** Runs started in this window, named before the daemon's list of runs includes them. */
  private live: RunRecord[] = [];
  private records: StoredRunRecord[] = [];
  private exported: ReadonlySet<string> = new Set();
  /** Where each question of this window's runs stands, as the daemon last told it. */
  private approvals = new Map<string, ApprovalState>();
  private readonly changed = new vscode.EventEmitter<ReceiptNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(
    client: DaemonClient,
    private readonly root: () => vscode.Uri | undefined,
  ) {
    this.disposables.push(
      vscode.window.createTreeView("counterfoil.receipts", {
        treeDataProvider: this,
        showCollapseAll: true,
      }),
      client.onReceipt((receipt) => this.add(receipt)),
      client.onApprovalState((told) => {
        this.approvals.set(`${told.runId ?? ""}/${told.toolCallId}`, told);
        this.changed.fire(undefined);
      }),
      client.onRunStarted((started) => {
        this.live = withLiveRuns(this.live, [
          liveRunRecord(started, new Date().toISOString()),
        ]);
        this.changed.fire(undefined);
      }),
    );
  }

  /** Receipts currently shown, in log order. */
  get shown(): readonly Receipt[] {
    return this.receipts;
  }

  get logPath(): string | null {
    return this.path;
  }

  /**
   * Replaces the contents with the daemon's answer to `counterfoil/receipts`: the receipts, and
   * the runs (goal, time, verdict) that label their groups. One change event for both: VS Code
   * redraws a tree at once on a change and again for any change in the next 200 ms, and a click
   * on a row's inline action during that second redraw is lost.
   */
  load(result: ReceiptsResult): void {
    // A log that does not verify comes back with only the receipts before its bad line; when
    // that is none, keep what was shown, so Verify can show the receipts before the bad line.
    if (!(result.error && result.receipts.length === 0)) {
      this.receipts = [...result.receipts];
    }
    this.path = result.logPath;
    this.loadProblem = result.error;
    this.verifyProblem = null;
    this.runs = [...(result.runs ?? [])];
    this.records = [...(result.records ?? [])];
    this.exported = new Set(result.exportedRuns ?? []);
    this.changed.fire(undefined);
  }

  add(receipt: Receipt): void {
    if (
      this.receipts.some((known) => known.receipt_id === receipt.receipt_id)
    ) {
      return;
    }
    this.receipts.push(receipt);
    this.changed.fire(undefined);
  }

  showVerification(result: VerifyResult): void {
    this.verifyProblem = verifyFinding(result);
    if (!result.ok && typeof result.line === "number") {
      this.receipts = this.receipts.slice(0, Math.max(0, result.line - 1));
    }
    this.changed.fire(undefined);
  }

  showProblem(message: string): void {
    this.loadProblem = message;
    this.changed.fire(undefined);
  }

  getTreeItem(node: ReceiptNode): vscode.TreeItem {
    const item = new vscode.TreeItem(
      node.label,
      node.children.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : node.expanded
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = node.contextValue;
    if (node.icon) {
      item.iconPath = new vscode.ThemeIcon(
        node.icon.id,
        node.icon.color ? new vscode.ThemeColor(node.icon.color) : undefined,
      );
    }
    const root = this.root();
    if (node.command) {
      item.command = {
        command: node.command.id,
        title: node.command.title,
        arguments: node.command.arguments,
      };
    } else if (node.openPath && root) {
      item.command = {
        command: "vscode.open",
        title: "Open File",
        arguments: [vscode.Uri.joinPath(root, node.openPath)],
      };
    }
    return item;
  }

  /** Every receipt node, across the run groups. */
  receiptNodes(): ReceiptNode[] {
    return this.getChildren().flatMap((root) =>
      root.contextValue === "run" ? root.children : [],
    );
  }

  getChildren(node?: ReceiptNode): ReceiptNode[] {
    if (node) {
      return node.children;
    }
    // Verify's finding names itself; a log that could not be read is a log problem.
    const problem =
      this.loadProblem && this.verifyProblem
        ? {
            label: this.verifyProblem.label,
            message: `${this.loadProblem}; ${this.verifyProblem.message}`,
          }
        : (this.verifyProblem ?? this.loadProblem);
    return receiptRoots(
      this.receipts,
      problem,
      withLiveRuns(this.runs, this.live),
      this.records,
      this.exported,
      [...this.approvals.values()],
    );
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

// The receipts commands: refresh and verify the log, open it, revert an edit from its receipt,
// and show what the content store holds (a command's output, an edit's bytes before and after).

import * as path from "node:path";
import * as vscode from "vscode";
import { type DaemonClient, errorMessage } from "../daemon/client";
import {
  type ExportEvidenceResult,
  Methods,
  type ReceiptsResult,
  type RevertResult,
  type VerifyResult,
} from "../daemon/protocol";
import type { ReceiptsTree } from "./receiptsTree";
import { NO_RECEIPT_TO_REVERT } from "./receiptNodes";
import { verifyReport } from "./verifyReport";
import { commandRegistrar } from "../commandRegistrar";

const OBJECT_SCHEME = "counterfoil-object";

function objectUri(sha256: string, title: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: OBJECT_SCHEME,
    path: `/${title.replace(/[/\\]/g, "_")}`,
    query: `sha256=${sha256}`,
  });
}

export class ReceiptCommands implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: DaemonClient,
    private readonly receipts: ReceiptsTree,
    private readonly trace: vscode.LogOutputChannel,
  ) {
    const register = commandRegistrar(this.disposables);
    register("counterfoil.revertReceipt", (target?: unknown) =>
      this.revert(target),
    );
    register("counterfoil.showObject", (sha256?: unknown, title?: unknown) =>
      typeof sha256 === "string"
        ? this.openObject(sha256, typeof title === "string" ? title : sha256)
        : undefined,
    );
    register(
      "counterfoil.showAppliedDiff",
      (before?: unknown, after?: unknown, title?: unknown) =>
        this.showAppliedDiff(before, after, title),
    );
    register("counterfoil.verifyReceipts", () => this.verifyReceipts());
    register("counterfoil.exportEvidence", (commit?: unknown) =>
      this.exportEvidence(typeof commit === "string" ? commit : undefined),
    );
    register("counterfoil.refreshReceipts", () => this.refreshReceipts());
    register("counterfoil.openReceiptLog", () => this.openReceiptLog());
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(OBJECT_SCHEME, {
        provideTextDocumentContent: (uri) => this.objectText(uri),
      }),
    );
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  async refreshReceipts(): Promise<ReceiptsResult | undefined> {
    try {
      const result = await this.client.request(Methods.receipts, {});
      this.receipts.load(result);
      return result;
    } catch (error) {
      this.receipts.showProblem(
        `could not load receipts: ${errorMessage(error)}`,
      );
      return undefined;
    }
  }

  async verifyReceipts(): Promise<VerifyResult | undefined> {
    try {
      await this.refreshReceipts();
      const result = await this.client.request(Methods.verifyReceipts, {});
      this.receipts.showVerification(result);
      const report = verifyReport(result);
      if (result.ok) {
        void vscode.window.showInformationMessage(`Counterfoil: ${report}`);
      } else {
        void vscode.window.showWarningMessage(`Counterfoil: ${report}`);
      }
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil could not verify receipts: ${errorMessage(error)}`,
      );
      return undefined;
    }
  }

  /** Signs the runs behind a commit into its evidence note (the daemon decides what). */
  async exportEvidence(
    commit?: string,
  ): Promise<ExportEvidenceResult | undefined> {
    const revision =
      commit ??
      (await vscode.window.showInputBox({
        title: "Counterfoil: Export Evidence for Commit",
        prompt:
          "The commit whose runs to sign into a git note (refs/notes/counterfoil)",
        value: "HEAD",
      }));
    if (!revision?.trim()) {
      return undefined;
    }
    let result: ExportEvidenceResult;
    try {
      result = await this.client.request(Methods.exportEvidence, {
        commit: revision.trim(),
      });
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil could not export evidence: ${errorMessage(error)}`,
      );
      return undefined;
    }
    if (!result.ok) {
      void vscode.window.showErrorMessage(
        `Counterfoil exported no evidence: ${result.error ?? "unknown error"}`,
      );
      return result;
    }
    await this.refreshReceipts();
    const reviews = result.reviewRejected.length
      ? ` (${result.reviewRejected.length} review rejected)`
      : "";
    const unreceipted = result.unreceipted.length
      ? `; not from a receipt: ${result.unreceipted.join(", ")}`
      : "";
    void vscode.window.showInformationMessage(
      `Counterfoil: evidence for ${result.commit?.slice(0, 12)} in a git note: ` +
        `${result.runs.length} run(s), ${result.effects} effect(s)${reviews}, ${result.files} file(s), ` +
        `validation ${result.validation}${unreceipted}. Push it with: git push origin refs/notes/counterfoil`,
    );
    return result;
  }

  async openReceiptLog(): Promise<void> {
    const result = await this.refreshReceipts();
    const logPath = result?.logPath;
    if (!logPath) {
      void vscode.window.showInformationMessage(
        "Counterfoil keeps receipts in memory only; set counterfoil.receiptLog to keep a log.",
      );
      return;
    }
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri =
      path.isAbsolute(logPath) || !root
        ? vscode.Uri.file(logPath)
        : vscode.Uri.joinPath(root, logPath);
    try {
      await vscode.window.showTextDocument(uri, { preview: false });
    } catch (error) {
      void vscode.window.showWarningMessage(
        `Counterfoil could not open ${uri.fsPath}: ${errorMessage(error)}`,
      );
    }
  }

  /**
   * Undoes an edit (a diff) or a command (a multi-file diff) from its receipt, approved like any
   * effect. The command is offered only on a receipt's row, so a call without one is a click VS
   * Code could not resolve: a refresh of the tree drops the rows' handles until it has asked for
   * them again, and a click in between reaches the command with nothing. That is said, not guessed.
   */
  async revert(target?: unknown): Promise<RevertResult | undefined> {
    const toolCallId =
      typeof target === "string"
        ? target
        : target && typeof target === "object" && "toolCallId" in target
          ? String(target.toolCallId)
          : undefined;
    if (!toolCallId) {
      this.trace.warn(
        "revert: the click reached no receipt (the Receipts view was being redrawn); nothing was reverted",
      );
      void vscode.window.showWarningMessage(NO_RECEIPT_TO_REVERT);
      return undefined;
    }
    try {
      const result = await this.client.request(Methods.revert, {
        toolCallId,
      });
      if (result.receipt && result.receipt.exit_state === "ok") {
        void vscode.window.showInformationMessage(
          `Counterfoil: ${result.observation}`,
        );
      } else {
        void vscode.window.showWarningMessage(
          `Counterfoil did not revert ${toolCallId}: ${result.observation}`,
        );
      }
      await this.refreshReceipts();
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil could not revert ${toolCallId}: ${errorMessage(error)}`,
      );
      return undefined;
    }
  }

  /** Opens bytes from the content store (a command's output) as a read-only document. */
  async openObject(sha256: string, title: string): Promise<void> {
    const uri = objectUri(sha256, title);
    try {
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: true });
    } catch (error) {
      void vscode.window.showWarningMessage(
        `Counterfoil could not open ${title}: ${errorMessage(error)}`,
      );
    }
  }

  /** The applied diff of an edit receipt: the stored bytes before against those written. */
  async showAppliedDiff(
    before: unknown,
    after: unknown,
    title: unknown,
  ): Promise<void> {
    const label = typeof title === "string" ? title : "applied edit";
    const side = (digest: unknown, name: string) =>
      typeof digest === "string"
        ? objectUri(digest, `${label} ${name}`)
        : vscode.Uri.from({
            scheme: OBJECT_SCHEME,
            path: `/${label} ${name}`,
            query: "empty",
          });
    await vscode.commands.executeCommand(
      "vscode.diff",
      side(before, "before"),
      side(after, "after"),
      `${label}: before ↔ after`,
      { preview: true },
    );
  }

  private async objectText(uri: vscode.Uri): Promise<string> {
    const sha256 = new URLSearchParams(uri.query).get("sha256");
    if (!sha256) {
      return "";
    }
    const result = await this.client.request(Methods.object, {
      sha256,
    });
    if (!result.found || result.text === null) {
      return `(the content store does not hold ${sha256})`;
    }
    return result.truncated
      ? `${result.text}\n… (truncated: ${result.bytes ?? "?"} bytes in all)`
      : result.text;
  }
}

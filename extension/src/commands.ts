// The command palette: run the agent, run a validation, cancel, verify and browse receipts,
// show the trace, restart the daemon. (Accept and Reject belong to the review.)

import * as path from "node:path";
import * as vscode from "vscode";
import type { DaemonClient } from "./client";
import { isArgv } from "./launch";
import {
  type AgentEvent,
  Methods,
  type ReceiptsResult,
  type RunResult,
  type StatusResult,
  type ValidationResult,
  type VerifyResult,
} from "./protocol";
import type { ReceiptsTree } from "./receiptsTree";
import type { ReviewController } from "./review";
import { summarizeRun } from "./runSummary";

export interface CommandContext {
  client: DaemonClient;
  review: ReviewController;
  receipts: ReceiptsTree;
  trace: vscode.LogOutputChannel;
  validationOutput: vscode.OutputChannel;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function describeStep(event: AgentEvent): string {
  if (event.action && "tool" in event.action) {
    const target = event.action.arguments.path ?? event.action.arguments.argv;
    const subject = Array.isArray(target)
      ? target.join(" ")
      : typeof target === "string"
        ? target
        : "";
    return `step ${event.step}: ${event.action.tool} ${subject}`.trim();
  }
  if (event.action && "final" in event.action) {
    return `step ${event.step}: final answer`;
  }
  return `step ${event.step}: ${event.result ?? "no action"}`;
}

export class AgentCommands implements vscode.Disposable {
  private run: vscode.CancellationTokenSource | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: CommandContext) {
    const register = (
      id: string,
      handler: (...args: unknown[]) => unknown,
    ): void => {
      this.disposables.push(vscode.commands.registerCommand(id, handler));
    };
    register("counterfoil.runAgent", (goal?: unknown) =>
      this.runAgent(typeof goal === "string" ? goal : undefined),
    );
    register("counterfoil.runValidation", (argv?: unknown) =>
      this.runValidation(Array.isArray(argv) ? argv : undefined),
    );
    register("counterfoil.cancelRun", () => this.cancelRun());
    register("counterfoil.verifyReceipts", () => this.verifyReceipts());
    register("counterfoil.refreshReceipts", () => this.refreshReceipts());
    register("counterfoil.openReceiptLog", () => this.openReceiptLog());
    register("counterfoil.showTrace", () => context.trace.show(true));
    register("counterfoil.restartServer", () => this.restartServer());
  }

  dispose(): void {
    this.run?.cancel();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  async runAgent(goalArgument?: string): Promise<RunResult | undefined> {
    if (this.run) {
      void vscode.window.showWarningMessage(
        "A Counterfoil run is already in progress; cancel it first.",
      );
      return undefined;
    }
    const goal =
      goalArgument ??
      (await vscode.window.showInputBox({
        title: "Counterfoil: Run Agent",
        prompt:
          "What should the agent do? Every edit and command will ask for your approval.",
        placeHolder: "e.g. make tests/test_math.py pass",
        ignoreFocusOut: true,
        validateInput: (value) =>
          value.trim() === "" ? "Describe the goal." : undefined,
      }));
    if (!goal || goal.trim() === "") {
      return undefined;
    }
    const cancellation = new vscode.CancellationTokenSource();
    this.run = cancellation;
    void vscode.commands.executeCommand(
      "setContext",
      "counterfoil.running",
      true,
    );
    const { trace } = this.context;
    trace.info(`run: ${goal}`);
    try {
      return await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: "Counterfoil",
          cancellable: true,
        },
        async (progress, progressToken) => {
          progressToken.onCancellationRequested(() => cancellation.cancel());
          progress.report({ message: `running: ${goal}` });
          const listeners = [
            this.context.client.onEvent((event) => {
              trace.info(`${describeStep(event)} → ${event.result ?? ""}`);
              progress.report({ message: describeStep(event) });
            }),
            this.context.client.onModelState((state) => {
              if (state.state === "loading") {
                progress.report({
                  message: `loading the model${state.message ? `: ${state.message}` : ""}`,
                });
              } else if (
                state.state === "generating" &&
                typeof state.tokensPerSecond === "number"
              ) {
                progress.report({
                  message: `generating (${state.tokensPerSecond.toFixed(1)} tok/s)`,
                });
              }
            }),
            this.context.review.onDidChangePending((subject) => {
              if (subject) {
                progress.report({
                  message: `waiting for your answer: ${subject}`,
                });
              }
            }),
          ];
          try {
            const result = await this.context.client.request<RunResult>(
              Methods.run,
              { goal },
              cancellation.token,
            );
            this.reportRun(result);
            return result;
          } finally {
            for (const listener of listeners) {
              listener.dispose();
            }
          }
        },
      );
    } catch (error) {
      trace.error(`run failed: ${errorMessage(error)}`);
      void vscode.window.showErrorMessage(
        `Counterfoil run failed: ${errorMessage(error)}`,
      );
      return undefined;
    } finally {
      cancellation.dispose();
      this.run = undefined;
      void vscode.commands.executeCommand(
        "setContext",
        "counterfoil.running",
        false,
      );
    }
  }

  cancelRun(): void {
    if (!this.run) {
      void vscode.window.showInformationMessage(
        "No Counterfoil run is in progress.",
      );
      return;
    }
    this.context.trace.info("run: cancel requested");
    this.run.cancel();
  }

  async runValidation(
    argvArgument?: unknown[],
  ): Promise<ValidationResult | undefined> {
    try {
      let argv = isArgv(argvArgument) ? argvArgument : undefined;
      if (!argv) {
        const status = await this.context.client.request<StatusResult>(
          Methods.status,
          {},
        );
        if (status.allowedCommands.length === 0) {
          const choice = await vscode.window.showWarningMessage(
            'No validation commands are allowed. Add one to counterfoil.allowedCommands, e.g. ["python", "-m", "pytest", "-q"].',
            "Open Settings",
          );
          if (choice === "Open Settings") {
            void vscode.commands.executeCommand(
              "workbench.action.openSettings",
              "counterfoil.allowedCommands",
            );
          }
          return undefined;
        }
        const picked = await vscode.window.showQuickPick(
          status.allowedCommands.map((command) => ({
            label: command.join(" "),
            detail: JSON.stringify(command),
            argv: command,
          })),
          {
            title: "Counterfoil: Run Validation",
            placeHolder: "Allowed command to run (you approve it next)",
          },
        );
        argv = picked?.argv;
      }
      if (!argv) {
        return undefined;
      }
      const chosen = argv;
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Counterfoil: ${chosen.join(" ")}`,
        },
        () =>
          this.context.client.request<ValidationResult>(Methods.runValidation, {
            argv: chosen,
          }),
      );
      this.reportValidation(chosen, result);
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil validation failed to run: ${errorMessage(error)}`,
      );
      return undefined;
    }
  }

  async refreshReceipts(): Promise<ReceiptsResult | undefined> {
    try {
      const result = await this.context.client.request<ReceiptsResult>(
        Methods.receipts,
        {},
      );
      this.context.receipts.load(result);
      return result;
    } catch (error) {
      this.context.receipts.showProblem(
        `could not load receipts: ${errorMessage(error)}`,
      );
      return undefined;
    }
  }

  async verifyReceipts(): Promise<VerifyResult | undefined> {
    try {
      await this.refreshReceipts();
      const result = await this.context.client.request<VerifyResult>(
        Methods.verifyReceipts,
        {},
      );
      this.context.receipts.showVerification(result);
      if (result.ok) {
        void vscode.window.showInformationMessage(
          `Counterfoil: the receipt log verifies (${result.count} receipts).`,
        );
      } else {
        void vscode.window.showWarningMessage(
          `Counterfoil: the receipt log does not verify: ${result.error ?? "unknown reason"}`,
        );
      }
      return result;
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil could not verify receipts: ${errorMessage(error)}`,
      );
      return undefined;
    }
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

  async restartServer(): Promise<void> {
    try {
      this.run?.cancel();
      this.context.review.rejectAll("the daemon restarted");
      await this.context.client.restart();
      await this.refreshReceipts();
      void vscode.window.showInformationMessage(
        "Counterfoil daemon restarted.",
      );
    } catch (error) {
      void vscode.window.showErrorMessage(errorMessage(error));
    }
  }

  private reportRun(result: RunResult): void {
    const { trace } = this.context;
    const summary = summarizeRun(result);
    trace.info(summary);
    if (result.completed) {
      void vscode.window.showInformationMessage(summary);
    } else {
      void vscode.window
        .showWarningMessage(summary, "Show Trace")
        .then((choice) => choice && trace.show(true));
    }
  }

  private reportValidation(argv: string[], result: ValidationResult): void {
    const output = this.context.validationOutput;
    output.appendLine(`$ ${argv.join(" ")}`);
    output.appendLine(result.observation);
    output.appendLine("");
    output.show(true);
    const summary = `${argv.join(" ")} (${result.outcome ?? "no outcome"})`;
    if (result.outcome === "ok") {
      void vscode.window.showInformationMessage(
        `Validation passed: ${summary}`,
      );
    } else if (result.receipt) {
      void vscode.window.showWarningMessage(`Validation failed: ${summary}`);
    } else if (result.outcome === "denied") {
      void vscode.window.showInformationMessage(
        `Validation not run: ${summary}`,
      );
    } else {
      void vscode.window.showWarningMessage(
        `Validation did not run: ${result.observation}`,
      );
    }
  }
}

// Entry point: wires the daemon client to the review, the receipts view, the status bar and the
// commands. Every detail lives in the module named for it.

import * as vscode from "vscode";
import { DaemonClient } from "./client";
import { AgentCommands } from "./commands";
import { ReceiptsTree } from "./receiptsTree";
import { ReviewController } from "./review";
import { readDaemonSettings } from "./settings";
import { ModelStatusBar } from "./statusBar";

/** What activate() returns; the extension-host tests drive the extension through it. */
export interface CounterfoilApi {
  client: DaemonClient;
  review: ReviewController;
  receipts: ReceiptsTree;
  commands: AgentCommands;
}

let activeClient: DaemonClient | undefined;

export async function activate(
  context: vscode.ExtensionContext,
): Promise<CounterfoilApi> {
  const trace = vscode.window.createOutputChannel("Counterfoil", { log: true });
  const validationOutput = vscode.window.createOutputChannel(
    "Counterfoil Validation",
  );
  const settings = () =>
    readDaemonSettings(vscode.workspace.getConfiguration("counterfoil"));

  const review = new ReviewController(
    trace,
    () => settings().confirmTimeoutSeconds,
  );
  const client = new DaemonClient(trace, (params, token) =>
    review.confirm(params, token),
  );
  const receipts = new ReceiptsTree(
    () => vscode.workspace.workspaceFolders?.[0]?.uri,
  );
  const treeView = vscode.window.createTreeView("counterfoil.receipts", {
    treeDataProvider: receipts,
    showCollapseAll: true,
  });
  const statusBar = new ModelStatusBar();
  const commands = new AgentCommands({
    client,
    review,
    receipts,
    trace,
    validationOutput,
  });
  activeClient = client;

  context.subscriptions.push(
    trace,
    validationOutput,
    review,
    client,
    receipts,
    treeView,
    statusBar,
    commands,
    client.onReceipt((receipt) => receipts.add(receipt)),
    client.onModelState((state) => statusBar.update(state)),
    client.onRunning((running) => {
      statusBar.showDaemon(running);
      if (!running) {
        review.rejectAll("the daemon stopped");
      }
    }),
  );

  if (vscode.workspace.workspaceFolders?.length) {
    void client
      .start()
      .then(() => commands.refreshReceipts())
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        trace.error(message);
        void vscode.window
          .showErrorMessage(message, "Open Settings", "Show Trace")
          .then((choice) => {
            if (choice === "Open Settings") {
              void vscode.commands.executeCommand(
                "workbench.action.openSettings",
                "counterfoil.serverCommand",
              );
            } else if (choice === "Show Trace") {
              trace.show(true);
            }
          });
      });
  }
  return { client, review, receipts, commands };
}

/** Stops the daemon before the output channel it writes to is disposed. */
export async function deactivate(): Promise<void> {
  await activeClient?.stop();
  activeClient = undefined;
}

// Entry point, a table of contents: the output channels, the interpreter, the daemon client,
// the components that wire themselves to it (review, receipts, status bar, run panel, the run
// and receipts commands, setup), then the daemon started. Every detail lives in the module
// named for it, in the folder for its concern.

import * as vscode from "vscode";
import { DaemonClient } from "./daemon/client";
import { InterpreterSource } from "./daemon/interpreter";
import { ModelStatusBar } from "./model/statusBar";
import { ReceiptCommands } from "./receipts/receiptCommands";
import { ReceiptsTree } from "./receipts/receiptsTree";
import { ReviewController } from "./review/controller";
import { RunCommands } from "./run/runCommands";
import { RunPanel } from "./run/runPanel";
import { SessionCommands } from "./run/sessionCommands";
import { showStartFailure } from "./setup/startFailure";
import { FolderGrantCommands } from "./setup/folderGrantCommands";
import { SetupCommands } from "./setup/walkthrough";

/** What activate() returns; the extension-host tests drive the extension through it. */
export interface CounterfoilApi {
  client: DaemonClient;
  review: ReviewController;
  receipts: ReceiptsTree;
  commands: RunCommands;
  sessions: SessionCommands;
  receiptCommands: ReceiptCommands;
  setup: SetupCommands;
  panel: RunPanel;
}

let activeClient: DaemonClient | undefined;

/** What the run panel says while the daemon starts and lists the runs that can go on. */
export const LOOKING_FOR_RUNS =
  "Looking for a paused or interrupted run to resume (the daemon is starting)…";

export function activate(context: vscode.ExtensionContext): CounterfoilApi {
  const trace = vscode.window.createOutputChannel("Counterfoil", { log: true });
  const validationOutput = vscode.window.createOutputChannel(
    "Counterfoil Validation",
  );
  const interpreter = new InterpreterSource(context.extensionPath);
  const client = new DaemonClient(trace, interpreter);
  const review = new ReviewController(client, trace);
  const receipts = new ReceiptsTree(
    client,
    () => vscode.workspace.workspaceFolders?.[0]?.uri,
  );
  const statusBar = new ModelStatusBar(client);
  const panel = new RunPanel(context.extensionUri, client, review);
  const receiptCommands = new ReceiptCommands(client, receipts, trace);
  const commands = new RunCommands({
    client,
    review,
    receiptCommands,
    panel,
    trace,
    validationOutput,
  });
  const sessions = new SessionCommands(
    client,
    commands,
    panel,
    context.workspaceState,
    trace,
  );
  const setup = new SetupCommands(
    interpreter,
    context,
    async (grants, folder) => {
      await client.request("counterfoil/confirmFolderGrants", {
        grants,
        origin: "walkthrough",
        ...(folder === undefined ? {} : { folder }),
      });
    },
  );
  const folderGrants = new FolderGrantCommands(client, panel);
  panel.setActions({ allowFolderGrants: () => folderGrants.allow() });
  context.subscriptions.push(
    client.onRunning((running) => {
      if (running) setup.noteInterpreterReady();
    }),
  );
  activeClient = client;
  context.subscriptions.push(
    trace,
    validationOutput,
    interpreter,
    review,
    client,
    receipts,
    statusBar,
    panel,
    receiptCommands,
    commands,
    sessions,
    setup,
    folderGrants,
  );

  setup.openWalkthroughOnce();
  if (vscode.workspace.workspaceFolders?.length) {
    // Until the daemon has listed its runs, the panel says it is looking for one to go on.
    panel.lookingForRuns(LOOKING_FOR_RUNS);
    void client
      .start()
      .then(() => receiptCommands.refreshReceipts())
      .then(() => sessions.offerResumable(false))
      .catch((error: unknown) => showStartFailure(error, trace))
      .finally(() => panel.lookingForRuns(null));
  }
  return {
    client,
    review,
    receipts,
    commands,
    sessions,
    receiptCommands,
    setup,
    panel,
  };
}

/** Stops the daemon before the output channel it writes to is disposed. */
export async function deactivate(): Promise<void> {
  await activeClient?.stop();
  activeClient = undefined;
}

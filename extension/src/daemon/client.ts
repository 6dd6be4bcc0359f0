// The connection to `counterfoil serve`: starts it with the interpreter InterpreterSource chose,
// hands it the settings, re-sends them on change, restarts it cleanly (also when the interpreter
// changes), and turns its notifications into events.

import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  type AgentEvent,
  type ConfirmParams,
  type ConfirmResult,
  DAEMON_VERSION,
  type DownloadProgress,
  type FolderSettingsResult,
  Methods,
  type ModelState,
  type ModelText,
  type RunActivity,
  type RuleApproved,
  type ApprovalState,
  type ParamsOf,
  type Receipt,
  type RequestMethod,
  type ResultOf,
  type RunStarted,
  type RunStateNotice,
} from "./protocol";
import { confirmAnswer } from "./confirmAnswer";
import { type InterpreterSource, LaunchProblem } from "./interpreter";
import type { DaemonLaunch } from "./launch";
import { folderWrittenValues } from "./folderFiles";
import { readDaemonSettings } from "./settings";
import type { DaemonHistory } from "../model/daemonStatus";

export type ConfirmHandler = (
  params: ConfirmParams,
  token: vscode.CancellationToken,
) => Promise<ConfirmResult>;

export class DaemonNotStarted extends Error {}

/** A failed request (or any thrown value) in words for a message. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class DaemonClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private rootUri: string | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private confirm: ConfirmHandler = () => Promise.resolve({ approved: false });
  private launched: DaemonLaunch | undefined;
  private disposed = false;
  /** What the folder's files set of the person's own settings, as last sent (JSON). */
  private writtenSent = "";
  private lost: DaemonHistory = {};
  private readonly disposables: vscode.Disposable[] = [];

  private readonly eventEmitter = new vscode.EventEmitter<AgentEvent>();
  private readonly receiptEmitter = new vscode.EventEmitter<Receipt>();
  private readonly modelStateEmitter = new vscode.EventEmitter<ModelState>();
  private readonly runningEmitter = new vscode.EventEmitter<boolean>();
  private readonly runStartedEmitter = new vscode.EventEmitter<RunStarted>();
  private readonly modelTextEmitter = new vscode.EventEmitter<ModelText>();
  private readonly runActivityEmitter = new vscode.EventEmitter<RunActivity>();
  private readonly ruleApprovedEmitter =
    new vscode.EventEmitter<RuleApproved>();
  private readonly approvalStateEmitter =
    new vscode.EventEmitter<ApprovalState>();
  private readonly runStateEmitter = new vscode.EventEmitter<RunStateNotice>();
  private readonly downloadEmitter =
    new vscode.EventEmitter<DownloadProgress>();
  private readonly folderSettingsEmitter =
    new vscode.EventEmitter<FolderSettingsResult>();

  /** One per agent step (`counterfoil/event`). */
  readonly onEvent = this.eventEmitter.event;
  /** One per new receipt (`counterfoil/receipt`). */
  readonly onReceipt = this.receiptEmitter.event;
  /** Model load and generation state (`counterfoil/modelState`). */
  readonly onModelState = this.modelStateEmitter.event;
  /** True when the daemon is up, false when it stopped (restart, crash, exit). */
  readonly onRunning = this.runningEmitter.event;
  /** A run or follow-up turn began (`counterfoil/runStarted`). */
  readonly onRunStarted = this.runStartedEmitter.event;
  /** The model's text as it is generated (`counterfoil/modelText`). */
  readonly onModelText = this.modelTextEmitter.event;
  /** What the model is doing for a run: loading, prefill, generation (`counterfoil/runActivity`). */
  readonly onRunActivity = this.runActivityEmitter.event;
  /** A call the person's approval rule approved, as it is decided (`counterfoil/ruleApproved`). */
  readonly onRuleApproved = this.ruleApprovedEmitter.event;
  /** Where a call's question stands, at each change (`counterfoil/approvalState`). */
  readonly onApprovalState = this.approvalStateEmitter.event;
  /** Stopping, cancelled or ended (`counterfoil/runState`). */
  readonly onRunState = this.runStateEmitter.event;
  /** A model download's progress (`counterfoil/download`). */
  readonly onDownload = this.downloadEmitter.event;
  /** What the folder's settings did (narrowed, ignored, waiting for a yes), when they change. */
  readonly onFolderSettings = this.folderSettingsEmitter.event;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly interpreter: InterpreterSource,
  ) {
    this.disposables.push(
      interpreter.onDidChange(() => this.onInterpreterChanged()),
      this.eventEmitter,
      this.receiptEmitter,
      this.modelStateEmitter,
      this.runningEmitter,
      this.runStartedEmitter,
      this.modelTextEmitter,
      this.runActivityEmitter,
      this.ruleApprovedEmitter,
      this.approvalStateEmitter,
      this.runStateEmitter,
      this.downloadEmitter,
      this.folderSettingsEmitter,
      vscode.workspace.onDidChangeConfiguration((event) =>
        this.onSettingsChanged(event),
      ),
      vscode.workspace.onDidChangeWorkspaceFolders(() =>
        this.onFoldersChanged(),
      ),
    );
    // VS Code says nothing when a folder's file changes a setting that is the person's alone
    // (it drops the value): the daemon is told when what the files set changes.
    const files = vscode.workspace.createFileSystemWatcher(
      "**/{.vscode/settings.json,*.code-workspace}",
    );
    const written = () => this.onFolderFilesChanged();
    this.disposables.push(
      files,
      files.onDidChange(written),
      files.onDidCreate(written),
      files.onDidDelete(written),
    );
  }

  /** Sets who answers `counterfoil/confirm` (the review); until then every confirm is a No. */
  handleConfirm(handler: ConfirmHandler): void {
    this.confirm = handler;
  }

  /** How the running (or last started) daemon was launched. */
  get launch(): DaemonLaunch | undefined {
    return this.launched;
  }

  /** When a daemon last stopped unasked (a crash, a kill) and when a fresh one answered. */
  get history(): DaemonHistory {
    return { ...this.lost };
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Starts the daemon unless it is running or starting; resolves when it answered `initialize`. */
  async start(): Promise<LanguageClient> {
    if (this.client && this.client.state === State.Running) {
      return this.client;
    }
    if (this.disposed) {
      // The window is closing or reloading: no daemon is started behind it.
      throw new DaemonNotStarted("Counterfoil is shutting down.");
    }
    const dead = this.client;
    if (dead && dead.state === State.Stopped && !this.starting) {
      this.client = undefined; // it died: a fresh daemon takes its place
      void dead.dispose().catch(() => undefined);
    }
    if (!this.starting) {
      this.starting = this.createAndStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.lost = {}; // asked to stop: the next daemon's story starts afresh
    if (client?.isRunning()) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`stopping the daemon: ${String(error)}`);
      }
    }
    this.runningEmitter.fire(false);
  }

  async restart(): Promise<LanguageClient> {
    this.output.info("restarting the daemon");
    await this.stop();
    return this.start();
  }

  /** Sends `method` with its declared params; the answer has its declared result type. */
  async request<M extends RequestMethod>(
    method: M,
    params: ParamsOf<M>,
    token?: vscode.CancellationToken,
  ): Promise<ResultOf<M>> {
    const client = await this.start();
    return token
      ? client.sendRequest<ResultOf<M>>(method, params, token)
      : client.sendRequest<ResultOf<M>>(method, params);
  }

  dispose(): void {
    this.disposed = true;
    void this.stop();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private async createAndStart(): Promise<LanguageClient> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      throw new DaemonNotStarted(
        "Counterfoil needs an open folder: its root is the agent's workspace.",
      );
    }
    this.rootUri = folder.uri.toString();
    let launch: DaemonLaunch;
    try {
      launch = await this.interpreter.resolve(folder);
    } catch (error) {
      throw new DaemonNotStarted(
        error instanceof LaunchProblem ? error.message : String(error),
      );
    }
    const argv = launch.argv;
    this.launched = launch;
    this.output.info(
      `starting the daemon with ${launch.description}: ${JSON.stringify(argv)} in ${folder.uri.fsPath}`,
    );
    const serverOptions: ServerOptions = {
      command: argv[0],
      // No `transport`: the client would append `--stdio`; the daemon speaks stdio anyway.
      args: argv.slice(1),
      options: { cwd: folder.uri.fsPath, env: launch.env },
    };
    const initialSettings = this.settings();
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      workspaceFolder: folder,
      outputChannel: this.output,
      traceOutputChannel: this.output,
      initializationOptions: initialSettings,
      // A daemon that dies is not restarted behind the person's back: the extension says the
      // run was interrupted and the next request (the sessions' Resume offer) starts a fresh one.
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (this.client === client) {
            // Not stop() (which lets go of its client first): the daemon stopped unasked.
            this.lost = { lostAt: new Date() };
            this.output.warn("the daemon stopped unexpectedly");
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          // Settings go out in their own shape from onSettingsChanged, not the client's.
          didChangeConfiguration: () => Promise.resolve(),
        },
      },
    };
    const client = new LanguageClient(
      "counterfoil",
      "Counterfoil",
      serverOptions,
      clientOptions,
    );
    client.onRequest(
      Methods.confirm,
      (params: ConfirmParams, token: vscode.CancellationToken) =>
        this.answerConfirm(params, token),
    );
    client.onNotification(Methods.event, (event: AgentEvent) =>
      this.eventEmitter.fire(event),
    );
    client.onNotification(Methods.receipt, (receipt: Receipt) =>
      this.receiptEmitter.fire(receipt),
    );
    client.onNotification(Methods.modelState, (state: ModelState) =>
      this.modelStateEmitter.fire(state),
    );
    client.onNotification(Methods.runStarted, (started: RunStarted) =>
      this.runStartedEmitter.fire(started),
    );
    client.onNotification(Methods.modelText, (text: ModelText) =>
      this.modelTextEmitter.fire(text),
    );
    client.onNotification(Methods.runActivity, (activity: RunActivity) =>
      this.runActivityEmitter.fire(activity),
    );
    client.onNotification(Methods.ruleApproved, (approved: RuleApproved) =>
      this.ruleApprovedEmitter.fire(approved),
    );
    client.onNotification(Methods.approvalState, (told: ApprovalState) =>
      this.approvalStateEmitter.fire(told),
    );
    client.onNotification(Methods.runState, (state: RunStateNotice) =>
      this.runStateEmitter.fire(state),
    );
    client.onNotification(Methods.download, (progress: DownloadProgress) =>
      this.downloadEmitter.fire(progress),
    );
    client.onNotification(
      Methods.folderSettingsChanged,
      (result: FolderSettingsResult) => this.folderSettingsEmitter.fire(result),
    );
    client.onDidChangeState(({ newState }) => {
      if (this.client !== client) {
        return; // a client let go of (stopped, or dead and replaced) speaks no more
      }
      if (newState === State.Running && this.lost.lostAt) {
        this.lost.restartedAt ??= new Date();
      }
      this.runningEmitter.fire(newState === State.Running);
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      // Stop the client's own restart attempts; the next request starts a fresh one.
      void client.dispose().catch(() => undefined);
      throw new DaemonNotStarted(
        `Could not start the Counterfoil daemon (${argv.join(" ")}): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // The daemon and the extension ship together: their version is checked once, here.
    const version = client.initializeResult?.serverInfo?.version;
    if (version !== DAEMON_VERSION) {
      this.client = undefined;
      void client.dispose().catch(() => undefined);
      throw new DaemonNotStarted(
        `The Counterfoil daemon (${argv.join(" ")}) is version ${version ?? "unknown"}; this extension needs ${DAEMON_VERSION}. Install the matching counterfoil package, or leave counterfoil.pythonPath unset to use the bundled daemon.`,
      );
    }
    // A setting changed while the daemon was starting was not sent (the client was not yet
    // running): the daemon hears it now, before any request that waited for this start.
    if (JSON.stringify(this.settings()) !== JSON.stringify(initialSettings)) {
      this.sendSettings(client);
    }
    return client;
  }

  /** The root is the first folder, fixed at initialize: a different first folder needs a new daemon. */
  private onFoldersChanged(): void {
    const first = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
    if (this.client && first !== this.rootUri) {
      void this.restart().catch((error) => this.output.error(String(error)));
    }
  }

  private onInterpreterChanged(): void {
    if (this.client) {
      void this.restart().catch((error) => this.output.error(String(error)));
    }
  }

  private async answerConfirm(
    params: ConfirmParams,
    token: vscode.CancellationToken,
  ): Promise<ConfirmResult> {
    const asking = this.client;
    let answer: ConfirmResult;
    try {
      answer = confirmAnswer(await this.confirm(params, token));
    } catch (error) {
      this.output.error(
        `answering confirm for ${params?.toolCallId}: ${String(error)}`,
      );
      answer = { approved: false };
    }
    if (!asking || asking !== this.client || !this.isRunning) {
      // The daemon that asked is stopping (a reload, a closed window, a restart): nothing is
      // answered, since a No now would be recorded as the person's. The daemon keeps the run
      // resumable and asks again when it resumes.
      this.output.info(
        `confirm ${params?.toolCallId}: not answered, the daemon is stopping`,
      );
      return new Promise<ConfirmResult>(() => undefined);
    }
    return answer;
  }

  /** The settings of the daemon's root folder, each value by where it was written (the
   * person's, the workspace's, the folder's): the daemon decides what a folder may do. */
  private settings(): object {
    const written = this.written();
    this.writtenSent = JSON.stringify(written);
    return readDaemonSettings(
      vscode.workspace.getConfiguration("counterfoil", this.rootFolder()),
      written,
    );
  }

  private rootFolder(): vscode.WorkspaceFolder | undefined {
    return (
      vscode.workspace.workspaceFolders?.find(
        (folder) => folder.uri.toString() === this.rootUri,
      ) ?? vscode.workspace.workspaceFolders?.[0]
    );
  }

  /** The person's-alone values the root folder's files set (VS Code drops them). */
  private written(): ReturnType<typeof folderWrittenValues> {
    return folderWrittenValues(
      this.rootFolder()?.uri,
      vscode.workspace.workspaceFile,
    );
  }

  private onFolderFilesChanged(): void {
    if (this.client?.state !== State.Running) {
      return;
    }
    const written = JSON.stringify(this.written());
    if (written !== this.writtenSent) {
      this.sendSettings(this.client);
    }
  }

  private onSettingsChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!this.client) {
      return;
    }
    if (
      event.affectsConfiguration("counterfoil") &&
      this.client.state === State.Running
    ) {
      this.sendSettings(this.client);
    }
  }

  private sendSettings(client: LanguageClient): void {
    void client
      .sendNotification(DidChangeConfigurationNotification.type, {
        settings: { counterfoil: this.settings() },
      })
      .catch((error) =>
        this.output.error(`sending settings: ${String(error)}`),
      );
  }
}

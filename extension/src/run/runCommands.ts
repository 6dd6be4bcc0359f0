// The run commands: run the agent, follow up, run a validation, stop, show the trace, restart
// the daemon. (Accept and Reject belong to the review, the receipts to receiptCommands.ts.)

import * as vscode from "vscode";
import { type DaemonClient, errorMessage } from "../daemon/client";
import { isArgv } from "../daemon/launch";
import { ensureModelOnDisk } from "../model/modelDownload";
import { ensureModelRuntime } from "../model/modelRuntime";
import {
  type AgentEvent,
  Methods,
  type RunResult,
  type ValidationResult,
  type ParamsOf,
} from "../daemon/protocol";
import type { ReceiptCommands } from "../receipts/receiptCommands";
import type { ReviewController } from "../review/controller";
import { describeAction, stateWords, wentWrong } from "./runModel";
import { RUN_VIEW, type RunPanel } from "./runPanel";
import { runEndNotice, summarizeRun } from "./runSummary";
import { stepNotice } from "./stepNotice";
import { commandRegistrar } from "../commandRegistrar";

export interface CommandContext {
  client: DaemonClient;
  review: ReviewController;
  receiptCommands: ReceiptCommands;
  panel: RunPanel;
  trace: vscode.LogOutputChannel;
  validationOutput: vscode.OutputChannel;
}

/** What starts a run: the daemon request, its params, and the goal the panel and trace show. */
/** The requests that start a run, each answered with a RunResult. */
type RunMethod =
  typeof Methods.run | typeof Methods.followUp | typeof Methods.resume;

interface RunStart {
  method: RunMethod;
  params: ParamsOf<RunMethod>;
  goal: string;
  /** The run a resume goes on with. */
  runId?: string;
}

function describeStep(event: AgentEvent): string {
  if (event.action) {
    return `step ${event.step}: ${describeAction(event)}`;
  }
  return `step ${event.step}: ${event.result ?? "no action"}`;
}

export class RunCommands implements vscode.Disposable {
  private run: vscode.CancellationTokenSource | undefined;
  private stopRequestedAt: number | undefined;
  /** The last goal typed whose run did not get to a first step. */
  private unstartedGoal: string | undefined;
  // Steps the last run reported (its events); none means the run never reached a step.
  private stepsSeen = 0;
  private preparing = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** Told when the daemon died under a run (or was restarted): the sessions offer Resume. */
  onDaemonLost: (() => unknown) | undefined;
  /** The run in flight, so Steer can wait for its pause before resuming. */
  current: Promise<RunResult | undefined> | undefined;
  /** Steer asked the run in flight to pause: it resumes at once, so its pause is not told. */
  steering = false;

  constructor(private readonly context: CommandContext) {
    const register = commandRegistrar(this.disposables);
    register("counterfoil.runAgent", (goal?: unknown) =>
      this.runAgent(typeof goal === "string" ? goal : undefined),
    );
    register("counterfoil.runValidation", (argv?: unknown) =>
      this.runValidation(Array.isArray(argv) ? argv : undefined),
    );
    register("counterfoil.followUp", (text?: unknown) =>
      this.followUp(typeof text === "string" ? text : undefined),
    );
    register("counterfoil.cancelRun", () => this.cancelRun());
    register("counterfoil.showRunPanel", () => context.panel.reveal());
    register("counterfoil.showTrace", () => context.trace.show(true));
    register("counterfoil.restartServer", () => this.restartServer());
    register("counterfoil.installModelRuntime", () =>
      this.installModelRuntime(),
    );
    context.panel.setActions({
      run: (goal) => this.runAgent(goal),
      followUp: (text) => this.followUp(text),
      stop: () => this.cancelRun(),
      openObject: (sha256, title) =>
        context.receiptCommands.openObject(sha256, title),
    });
  }

  /** A reload or a closed window never stops the run: only Stop does; the daemon keeps it
   * resumable when its client goes away. */
  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  async runAgent(goalArgument?: string): Promise<RunResult | undefined> {
    const goal = await this.textForRun(
      this.running || this.preparing,
      "A Counterfoil run is already in progress; cancel it first.",
      goalArgument,
      {
        title: "Counterfoil: Run Agent",
        prompt:
          "What should the agent do? Every edit and command will ask for your approval.",
        placeHolder: "e.g. make tests/test_math.py pass",
        // A goal whose run never started (no model, setup refused) is offered again.
        value: this.unstartedGoal,
        validateInput: (value) =>
          value.trim() === "" ? "Describe the goal." : undefined,
      },
    );
    if (goal === undefined) {
      return undefined;
    }
    this.unstartedGoal = goal;
    if (!(await this.prepareModel())) {
      return undefined;
    }
    const result = await this.startRun({
      method: Methods.run,
      params: { goal },
      goal,
    });
    if (result && this.stepsSeen > 0) {
      this.unstartedGoal = undefined;
    }
    return result;
  }

  /**
   * The text a new run starts from: `given`, or what the person types in `box`; undefined
   * when `busy` refuses a new run (the person is told `warning`) or nothing is typed.
   */
  private async textForRun(
    busy: boolean,
    warning: string,
    given: string | undefined,
    box: vscode.InputBoxOptions,
  ): Promise<string | undefined> {
    if (busy) {
      void vscode.window.showWarningMessage(warning);
      return undefined;
    }
    const text =
      given ??
      (await vscode.window.showInputBox({ ignoreFocusOut: true, ...box }));
    return text && text.trim() !== "" ? text : undefined;
  }

  /**
   * Before a run: the model's runtime is installed (or offered) and its files are on disk (or
   * downloaded with progress). False when the run must not start; the person was told why.
   */
  private async prepareModel(): Promise<boolean> {
    const { client, trace } = this.context;
    this.preparing = true;
    try {
      return (
        (await ensureModelRuntime(client, trace)) &&
        (await ensureModelOnDisk(client, trace))
      );
    } catch (error) {
      trace.error(`preparing the model: ${errorMessage(error)}`);
      void vscode.window.showErrorMessage(
        `Counterfoil run not started: ${errorMessage(error)}`,
      );
      return false;
    } finally {
      this.preparing = false;
    }
  }

  private async installModelRuntime(): Promise<void> {
    try {
      await ensureModelRuntime(this.context.client, this.context.trace, true);
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil: could not check the model runtime: ${errorMessage(error)}`,
      );
    }
  }

  /** Continues the last run's conversation with the person's next message. */
  async followUp(textArgument?: string): Promise<RunResult | undefined> {
    const text = await this.textForRun(
      this.running,
      "A Counterfoil run is in progress; stop it or wait for it first.",
      textArgument,
      {
        title: "Counterfoil: Follow Up",
        prompt:
          "Continue the conversation: the model sees everything said and observed so far.",
      },
    );
    if (text === undefined) {
      return undefined;
    }
    return this.startRun({
      method: Methods.followUp,
      params: { text },
      goal: text,
    });
  }

  /** Whether a run goes in this window. */
  get running(): boolean {
    return this.run !== undefined;
  }

  private startRun(start: RunStart): Promise<RunResult | undefined> {
    const going = this.request(start);
    this.current = going;
    return going;
  }

  /**
   * Runs the agent (a new goal or a follow-up), with its progress in the run panel; "Stop run"
   * there (or the command) sends `$/cancelRequest`, and the panel says "stopping…" until the
   * daemon answers.
   */
  private async request({
    method,
    params,
    goal,
    runId,
  }: RunStart): Promise<RunResult | undefined> {
    const cancellation = new vscode.CancellationTokenSource();
    this.run = cancellation;
    void vscode.commands.executeCommand(
      "setContext",
      "counterfoil.running",
      true,
    );
    const { trace, panel } = this.context;
    trace.info(`${method === Methods.followUp ? "follow-up" : "run"}: ${goal}`);
    const resumedHere =
      method === Methods.resume &&
      panel.model.turns.some((turn) => turn.runId === runId);
    if ((method === Methods.run || method === Methods.resume) && !resumedHere) {
      // A plain run starts a new conversation in the daemon; the panel starts afresh with it.
      // A run resumed in the panel that showed it keeps its earlier steps above.
      panel.clear();
    }
    panel.runStarted(
      goal,
      method === Methods.followUp,
      method === Methods.resume,
    );
    let lost = false;
    let refusals = 0;
    this.stepsSeen = 0;
    const listeners = [
      this.context.client.onRunning((running) => {
        lost ||= !running;
      }),
      this.context.client.onEvent((event) => {
        if (event.earlier) {
          return; // retold from the run's record: said when it happened
        }
        this.stepsSeen++;
        trace.info(`${describeStep(event)} → ${event.result ?? ""}`);
        // A failed or refused step is said where the person is looking, not only in the trace.
        const notice = stepNotice(event, describeStep(event), refusals);
        if (event.state === "refused") {
          refusals++;
        }
        if (notice) {
          void vscode.window.showWarningMessage(notice);
        }
      }),
    ];
    try {
      const result = await vscode.window.withProgress(
        { location: { viewId: RUN_VIEW } },
        () => this.context.client.request(method, params, cancellation.token),
      );
      if (this.stopRequestedAt !== undefined) {
        trace.info(
          `run: answered ${result.reason} ${Date.now() - this.stopRequestedAt} ms after Stop`,
        );
      }
      panel.runEnded(result);
      this.reportRun(result);
      void this.context.receiptCommands.refreshReceipts();
      return result;
    } catch (error) {
      if (lost || !this.context.client.isRunning) {
        // Not a rejection and not a verdict: the run is on disk and can be resumed.
        trace.warn(
          `run interrupted: the daemon stopped (${errorMessage(error)})`,
        );
        panel.runInterrupted();
        void Promise.resolve(this.onDaemonLost?.()).then(() =>
          this.context.receiptCommands.refreshReceipts(),
        );
        return undefined;
      }
      trace.error(`run failed: ${errorMessage(error)}`);
      panel.runFailed(errorMessage(error));
      void vscode.window.showErrorMessage(
        `Counterfoil run failed: ${errorMessage(error)}`,
      );
      return undefined;
    } finally {
      for (const listener of listeners) {
        listener.dispose();
      }
      cancellation.dispose();
      this.run = undefined;
      this.stopRequestedAt = undefined;
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
    this.context.trace.info("run: stop requested");
    this.stopRequestedAt = Date.now();
    this.context.panel.stopping();
    this.run.cancel();
  }

  async runValidation(
    argvArgument?: unknown[],
  ): Promise<ValidationResult | undefined> {
    try {
      let argv = isArgv(argvArgument) ? argvArgument : undefined;
      if (!argv) {
        const status = await this.context.client.request(Methods.status, {});
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
          this.context.client.request(Methods.runValidation, {
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

  /** Resumes a run kept on disk (`counterfoil/resume`), in the panel like any run. */
  resume(
    runId: string,
    goal: string,
    steer?: string,
  ): Promise<RunResult | undefined> {
    const params = steer ? { runId, steer } : { runId };
    return this.startRun({ method: Methods.resume, params, goal, runId });
  }

  /** A restart leaves a running run paused on disk (the daemon's shutdown), to be resumed. */
  async restartServer(): Promise<void> {
    try {
      await this.context.client.restart();
      await this.context.receiptCommands.refreshReceipts();
      await this.onDaemonLost?.();
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
    const steered = runEndNotice(result, this.steering) === undefined;
    this.steering = false;
    if (steered) {
      return;
    }
    if (result.completed || result.reason === "paused") {
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
    const summary = `${argv.join(" ")} (${stateWords(result) ?? "not run"})`;
    if (result.state === "approved" && !wentWrong(result)) {
      void vscode.window.showInformationMessage(
        `Validation passed: ${summary}`,
      );
    } else if (result.receipt) {
      void vscode.window.showWarningMessage(`Validation failed: ${summary}`);
    } else if (result.state === "rejected") {
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

// Runs kept on disk, in the editor: after a reload, a daemon restart or a crash the run panel
// offers the latest interrupted or paused run (`counterfoil/sessions`) with Resume, Steer and
// resume, and Discard; while a run goes, Pause and Steer. The daemon decides what a resume
// does; this asks it and shows what it says.

import * as vscode from "vscode";
import { type DaemonClient, errorMessage } from "../daemon/client";
import { Methods, type RunResult } from "../daemon/protocol";
import { discardedNotice, discardQuestion } from "./discardRun";
import { latestResumable, resumableView } from "./resumable";
import type { RunCommands } from "./runCommands";
import type { RunPanel } from "./runPanel";
import { commandRegistrar } from "../commandRegistrar";
import { REFRESH_RESUMABLE } from "./branchesSection";

/** Where an earlier version remembered the runs the person discarded (now the daemon's). */
const DISCARDED_KEY = "counterfoil.discardedRuns";
/** How long a run another daemon is still closing is waited for, to be offered. */
const RELEASE_WAIT_MS = 20_000;

export class SessionCommands implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: DaemonClient,
    private readonly runs: RunCommands,
    private readonly panel: RunPanel,
    private readonly state: vscode.Memento,
    private readonly trace: vscode.LogOutputChannel,
  ) {
    runs.onDaemonLost = () => this.offerResumable(true);
    panel.setActions({
      pause: () => this.pause(),
      steer: () => this.steer(),
      resume: (runId, steer) => this.resume(runId, steer),
      discard: (runId) => this.discard(runId),
    });
    const register = commandRegistrar(this.disposables);
    register("counterfoil.pauseRun", () => this.pause());
    register("counterfoil.resumeRun", (runId?: unknown) =>
      typeof runId === "string" ? this.resume(runId) : this.resumeLatest(),
    );
    // After the daemon changed what can go on (a branch kept ends its run): asked again, and
    // an offer the daemon no longer makes is taken away.
    register(REFRESH_RESUMABLE, () => this.offerResumable(false, true));
  }

  /**
   * Asks the daemon for its runs and offers the latest one that can go on, if any. After a
   * reload the window's previous daemon may still be closing its run (it holds the run until
   * its last checkpoint is written): while a run is live in no run of this window, it is asked
   * again, for up to `RELEASE_WAIT_MS`.
   */
  async offerResumable(crashed: boolean, replace = false): Promise<void> {
    const waitUntil = Date.now() + RELEASE_WAIT_MS;
    try {
      for (;;) {
        const listed = await this.client.request(Methods.sessions, {});
        this.panel.runsEnded(
          listed.sessions
            .filter((session) => ["ended", "discarded"].includes(session.state))
            .map((session) => session.runId),
        );
        const found = latestResumable(listed.sessions, this.discarded());
        const closingElsewhere =
          !found &&
          !this.runs.running &&
          listed.sessions.some((session) => session.state === "running");
        if (closingElsewhere && Date.now() < waitUntil) {
          await new Promise((done) => setTimeout(done, 500));
          continue;
        }
        if (found) {
          this.trace.info(`run ${found.runId} can be resumed (${found.state})`);
        }
        if (found || crashed || replace) {
          this.panel.showResumable(
            found ? resumableView(found, crashed) : null,
          );
        }
        return;
      }
    } catch (error) {
      this.trace.warn(
        `could not list the runs on disk: ${errorMessage(error)}`,
      );
    }
  }

  async resume(runId: string, steer?: string): Promise<RunResult | undefined> {
    const goal = this.panel.model.resumable?.goal ?? runId;
    return this.runs.resume(runId, goal, steer);
  }

  private async resumeLatest(): Promise<RunResult | undefined> {
    await this.offerResumable(false);
    const offered = this.panel.model.resumable;
    if (!offered) {
      void vscode.window.showInformationMessage(
        "Counterfoil: no interrupted or paused run to resume.",
      );
      return undefined;
    }
    return this.resume(offered.runId);
  }

  /** Pause the running run; once it stops at its boundary, the panel offers it to go on. */
  async pause(): Promise<void> {
    const answer = await this.client.request(Methods.pause, {});
    if (!answer.pausing) {
      void vscode.window.showInformationMessage(
        "No Counterfoil run is in progress.",
      );
      return;
    }
    const ended = await this.runs.current;
    if (ended?.reason === "paused") {
      await this.offerResumable(false);
    }
  }

  /** Pause the running run, then resume it with the person's message first. */
  async steer(): Promise<void> {
    const text = await vscode.window.showInputBox({
      title: "Counterfoil: Steer the run",
      prompt:
        "One message to the model: the run pauses at its next boundary, then goes on with it.",
      ignoreFocusOut: true,
    });
    if (!text?.trim()) {
      return;
    }
    this.runs.steering = true; // its pause is not told: the run goes on at once
    const answer = await this.client
      .request(Methods.pause, {})
      .catch(() => ({ pausing: false, runId: null }));
    const runId = answer.runId;
    if (!answer.pausing || !runId) {
      this.runs.steering = false;
      return;
    }
    const paused = await this.runs.current;
    if (paused?.reason === "paused") {
      await this.runs.resume(runId, this.goalOf() || runId, text);
    }
  }

  /** Asks, then has the daemon close the run for good, and says what it did (or why not). */
  async discard(runId: string): Promise<void> {
    const offered = this.panel.model.resumable;
    const shown = offered?.runId === runId ? offered : undefined;
    const question = discardQuestion(
      shown?.goal ?? runId,
      new Set(shown?.filesChanged.map((file) => file.path) ?? []).size,
    );
    const choice = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      "Discard",
    );
    if (choice !== "Discard") {
      return;
    }
    try {
      const result = await this.client.request(Methods.discard, {
        runId,
      });
      this.panel.clear();
      void vscode.window.showInformationMessage(discardedNotice(result));
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil: the run was not discarded: ${errorMessage(error)}`,
      );
    }
  }

  private goalOf(): string {
    const turns = this.panel.model.turns;
    return turns[turns.length - 1]?.goal ?? "";
  }

  private discarded(): Set<string> {
    return new Set(this.state.get<string[]>(DISCARDED_KEY, []));
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

// The run panel (a webview view in the Counterfoil container): the conversation as the daemon
// reports it, the proposals as the review reports them, and the controls a person needs (Accept,
// Reject with a reason, keep or drop hunks, Stop run, a follow-up). It renders and forwards;
// the daemon and the review decide. Strict CSP: only this extension's script, by nonce. The
// webview's script is runPanelScript.ts, bundled to dist/webview/run-panel.js.

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import type { FolderSettingsResult, RunResult } from "../daemon/protocol";
import {
  folderSettingLines,
  refusedSettingLines,
  waitingGrants,
} from "../setup/folderGrants";
import type { ReviewController } from "../review/controller";
import {
  addActivity,
  addEvent,
  addModelText,
  addRuleApproval,
  setApprovalState,
  emptyModel,
  endTurns,
  failTurn,
  finishTurn,
  interruptTurn,
  isGoing,
  lookingLine,
  type RunModel,
  setPausing,
  setProposal,
  setStopping,
  startTurn,
  verdictLines,
} from "./runModel";
import { isBranchPanelMessage } from "./branchMessages";
import { BranchesSection } from "./branchesSection";
import type { DrawnTurn, ModelMessage, PanelMessage } from "./panelMessages";
import { agentsFileLine, liveStepWords } from "./turnNotes";
import { type ResumableView, resumableLines } from "./resumable";

export type { PanelMessage } from "./panelMessages";

export const RUN_VIEW = "counterfoil.run";
/** Where esbuild writes the webview's script (from runPanelScript.ts; see esbuild.mjs). */
const WEBVIEW_SCRIPTS = "dist/webview";

/** What the panel needs from the commands: start a run or a follow-up, stop, show output. */
export interface RunActions {
  run(goal: string): unknown;
  followUp(text: string): unknown;
  stop(): unknown;
  pause(): unknown;
  /** Pause the running run, then resume it with one operator message the person types. */
  steer(): unknown;
  resume(runId: string, steer?: string): unknown;
  discard(runId: string): unknown;
  openObject(sha256: string, title: string): unknown;
  allowFolderGrants(): unknown;
}

export class RunPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  readonly model: RunModel = emptyModel();
  private view: vscode.WebviewView | undefined;
  private pendingRender: NodeJS.Timeout | undefined;
  private actions: Partial<RunActions> = {};
  private folderSettings: ModelMessage["folderSettings"] = null;
  private looking: string | null = null;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly renderedEmitter = new vscode.EventEmitter<RunModel>();
  /** Fires after each change is sent to the webview (tests wait on it). */
  readonly onDidRender = this.renderedEmitter.event;
  /** A forked run's branches, side by side above the conversation. */
  readonly branches: BranchesSection;

  constructor(
    private readonly extensionUri: vscode.Uri,
    client: DaemonClient,
    private readonly review: ReviewController,
  ) {
    this.branches = new BranchesSection(client, {
      post: (message) => void this.view?.webview.postMessage(message),
      reveal: () => this.reveal(),
    });
    this.disposables.push(
      this.branches,
      this.renderedEmitter,
      vscode.window.registerWebviewViewProvider(RUN_VIEW, this, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
      client.onRunStarted((started) => {
        startTurn(
          this.model,
          started.goal,
          started.runId,
          started.followUp === true,
          started.agentsFile,
          started.resumed === true,
          started.steer ?? null,
        );
        this.render();
      }),
      client.onModelText((text) => {
        addModelText(
          this.model,
          text.step,
          text.text,
          text.thinking === true,
          text.runId ?? null,
        );
        this.renderSoon();
      }),
      client.onEvent((event) => {
        addEvent(this.model, event);
        this.render();
      }),
      client.onRunActivity((activity) => {
        addActivity(this.model, activity);
        this.renderSoon();
      }),
      client.onRuleApproved((told) => {
        addRuleApproval(this.model, told);
        this.render();
      }),
      client.onApprovalState((told) => {
        setApprovalState(this.model, told);
        this.render();
      }),
      client.onRunState((state) => {
        if (state.state === "stopping") {
          setStopping(this.model);
          this.render();
        } else if (state.state === "pausing") {
          setPausing(this.model);
          this.render();
        }
      }),
      review.onDidChangeProposal((proposal) => {
        setProposal(this.model, proposal);
        this.render();
        if (proposal.state === "pending") {
          this.reveal();
        }
      }),
    );
  }

  /** Each part of the commands hands the panel its actions (the runs, the sessions). */
  setActions(actions: Partial<RunActions>): void {
    this.actions = { ...this.actions, ...actions };
  }

  /** A run or follow-up the extension just asked for. */
  runStarted(goal: string, followUp = false, resumed = false): void {
    this.model.resumable = null;
    startTurn(this.model, goal, null, followUp, undefined, resumed);
    this.render();
    this.reveal();
  }

  stopping(): void {
    setStopping(this.model);
    this.render();
  }

  runEnded(result: RunResult): void {
    finishTurn(this.model, result);
    this.render();
  }

  /** The daemon died under the run: interrupted, not rejected; Resume is offered next. */
  runInterrupted(): void {
    interruptTurn(this.model);
    this.render();
  }

  /** Says the panel is looking for a run that can go on (null: it has looked). */
  lookingForRuns(note: string | null): void {
    this.looking = note;
    this.render();
  }

  /** Offers a run kept on disk (null: nothing to offer). */
  showResumable(view: ResumableView | null): void {
    this.model.resumable = view;
    this.render();
    if (view) {
      this.reveal();
    }
  }

  /** What the folder's settings did and which of the person's own were refused, as the
   * daemon said (nothing shown when all is as set). */
  showFolderSettings(result: FolderSettingsResult): void {
    this.folderSettings =
      result.values.length === 0 && result.refused.length === 0
        ? null
        : {
            lines: folderSettingLines(result),
            waiting: Object.keys(waitingGrants(result)).length > 0,
            refused: refusedSettingLines(result),
          };
    this.render();
  }

  /** The daemon says these runs have ended: their stopped turns offer nothing to resume. */
  runsEnded(runIds: readonly string[]): void {
    if (endTurns(this.model, new Set(runIds))) {
      this.render();
    }
  }

  runFailed(error: string): void {
    failTurn(this.model, error);
    this.render();
  }

  clear(): void {
    this.model.turns = [];
    this.model.proposals = {};
    this.model.resumable = null;
    this.render();
  }

  reveal(): void {
    if (this.view) {
      this.view.show(true);
    } else {
      void vscode.commands.executeCommand(`${RUN_VIEW}.focus`).then(
        () => undefined,
        () => undefined,
      );
    }
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const scripts = vscode.Uri.joinPath(this.extensionUri, WEBVIEW_SCRIPTS);
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [media, scripts],
    };
    view.webview.html = this.html(view.webview, media, scripts);
    view.webview.onDidReceiveMessage((message: PanelMessage) =>
      this.onMessage(message),
    );
    view.onDidDispose(() => {
      this.view = undefined;
    });
  }

  /** Handles one message from the webview; public so the host tests can drive the panel. */
  async onMessage(message: PanelMessage): Promise<void> {
    if (isBranchPanelMessage(message)) {
      await this.branches.onMessage(message);
      return;
    }
    switch (message.type) {
      case "ready":
        this.render();
        this.branches.render();
        return;
      case "accept":
        await this.review.accept(message.id);
        return;
      case "reject":
        this.review.reject(message.id, message.reason);
        return;
      case "showDiff":
        await this.review.showDiff(message.id);
        return;
      case "hunks":
        await this.review.chooseHunks(message.id, message.keep);
        return;
      case "send": {
        const text = message.text.trim();
        if (!text) {
          return;
        }
        const last = this.model.turns[this.model.turns.length - 1];
        // A run that ended elsewhere keeps no conversation: the text starts a new one.
        const continues = last !== undefined && last.status !== "ended";
        await (continues
          ? this.actions.followUp?.(text)
          : this.actions.run?.(text));
        return;
      }
      case "newConversation":
        this.clear();
        return;
      case "stop":
        await this.actions.stop?.();
        return;
      case "pause":
        await this.actions.pause?.();
        return;
      case "steer":
        await this.actions.steer?.();
        return;
      case "resume":
        await this.actions.resume?.(message.runId, message.steer);
        return;
      case "discard":
        await this.actions.discard?.(message.runId);
        return;
      case "openOutput":
        await this.actions.openObject?.(message.sha256, "command output");
        return;
      case "allowFolderGrants":
        await this.actions.allowFolderGrants?.();
        return;
    }
  }

  /** Streamed text redraws at most every 150 ms, so the host keeps up with Stop and answers. */
  private renderSoon(): void {
    this.pendingRender ??= setTimeout(() => this.render(), 150);
  }

  private render(): void {
    if (this.pendingRender !== undefined) {
      clearTimeout(this.pendingRender);
      this.pendingRender = undefined;
    }
    const shown = new Set(
      this.model.turns.flatMap((turn) =>
        turn.steps.map((step) => step.toolCallId ?? ""),
      ),
    );
    const proposals = Object.values(this.model.proposals);
    const turns = this.model.turns.map((turn, index): DrawnTurn => ({
      ...turn,
      verdictLines: isGoing(turn) ? [] : verdictLines(turn),
      liveStepWords: turn.streaming
        ? liveStepWords(proposals, index, shown)
        : null,
      agentsFileLine: agentsFileLine(turn.agentsFile),
    }));
    const resumable = this.model.resumable;
    const message: ModelMessage = {
      type: "model",
      turns,
      proposals: this.model.proposals,
      resumable: resumable && {
        ...resumable,
        lines: resumableLines(resumable),
      },
      folderSettings: this.folderSettings,
      looking: lookingLine(this.model, this.looking),
    };
    void this.view?.webview.postMessage(message);
    this.renderedEmitter.fire(this.model);
  }

  private html(
    webview: vscode.Webview,
    media: vscode.Uri,
    scripts: vscode.Uri,
  ): string {
    const nonce = randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(
      vscode.Uri.joinPath(scripts, "run-panel.js"),
    );
    const style = webview.asWebviewUri(
      vscode.Uri.joinPath(media, "run-panel.css"),
    );
    const branchesStyle = webview.asWebviewUri(
      vscode.Uri.joinPath(media, "branches.css"),
    );
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<link rel="stylesheet" href="${branchesStyle.toString()}">
<title>Counterfoil run</title>
</head>
<body>
<section id="branches" aria-label="Branches" hidden></section>
<main id="conversation" aria-live="polite"></main>
<form id="composer">
  <label for="message" id="message-label">Goal</label>
  <textarea id="message" rows="3" placeholder="What should the agent do? Every edit and command asks for your approval."></textarea>
  <div class="row">
    <button type="submit" id="send">Run</button>
    <button type="button" id="pause" class="secondary" hidden title="Stop at the next boundary: a running command finishes and is receipted; Resume goes on">Pause</button>
    <button type="button" id="steer" class="secondary" hidden title="Pause, then resume with one message from you">Steer…</button>
    <button type="button" id="stop" class="secondary" hidden>Stop run</button>
    <button type="button" id="new" class="secondary" hidden>New conversation</button>
  </div>
</form>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

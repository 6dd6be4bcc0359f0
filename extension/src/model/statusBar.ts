// The status-bar item: the daemon's model state, tokens/s while generating, and in its tooltip
// the interpreter the daemon runs on. It listens to the client itself.

import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import { describeDownload, downloadDetail } from "./modelPrep";
import { describeDaemon, historyLine } from "./daemonStatus";
import { describeModelState } from "./modelState";
import type { DownloadProgress, ModelState } from "../daemon/protocol";

export class ModelStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    "counterfoil.modelState",
    vscode.StatusBarAlignment.Left,
    50,
  );

  private readonly disposables: vscode.Disposable[] = [this.item];

  constructor(private readonly client: DaemonClient) {
    this.item.name = "Counterfoil model";
    this.item.command = "counterfoil.showTrace";
    this.showDaemon(false);
    this.item.show();
    this.disposables.push(
      client.onModelState((state) => this.update(state)),
      client.onRunning((running) => this.showDaemon(running)),
      client.onDownload((progress) => this.showDownload(progress)),
    );
  }

  /** The interpreter line, and after a crash what became of the daemon (one story). */
  private get interpreterLine(): string {
    const launch = this.client.launch;
    return launch ? `\nDaemon: ${launch.description}` : "";
  }

  update(state: ModelState): void {
    const { text, tooltip } = describeModelState(state);
    const history = historyLine(this.client.history);
    this.item.text = text;
    this.item.tooltip =
      tooltip + (history ? `\n${history}` : "") + this.interpreterLine;
    this.item.backgroundColor =
      state.state === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : undefined;
  }

  /** `downloading 38 % of 2.3 GiB` while a model downloads; the daemon's state once it ends. */
  showDownload(progress: DownloadProgress): void {
    if (progress.state !== "downloading") {
      this.showDaemon(this.client.isRunning);
      return;
    }
    this.item.text = `$(cloud-download) Counterfoil: ${describeDownload(progress)}`;
    this.item.tooltip =
      `Model: ${progress.model}\n${downloadDetail(progress)}` +
      this.interpreterLine;
    this.item.backgroundColor = undefined;
  }

  showDaemon(running: boolean): void {
    const history = this.client.history;
    const { text, tooltip } = describeDaemon(running, history);
    this.item.text = text;
    this.item.tooltip = tooltip + this.interpreterLine;
    this.item.backgroundColor =
      !running && history.lostAt && !history.restartedAt
        ? new vscode.ThemeColor("statusBarItem.warningBackground")
        : undefined;
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

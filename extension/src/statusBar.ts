// The status-bar item: the daemon's model state, and tokens/s while generating.

import * as vscode from "vscode";
import { describeModelState } from "./modelState";
import type { ModelState } from "./protocol";

export class ModelStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    "counterfoil.modelState",
    vscode.StatusBarAlignment.Left,
    50,
  );

  constructor() {
    this.item.name = "Counterfoil model";
    this.item.command = "counterfoil.showTrace";
    this.showDaemon(false);
    this.item.show();
  }

  update(state: ModelState): void {
    const { text, tooltip } = describeModelState(state);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      state.state === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : undefined;
  }

  showDaemon(running: boolean): void {
    this.item.text = running
      ? "$(circle-outline) Counterfoil: unloaded"
      : "$(debug-disconnect) Counterfoil: stopped";
    this.item.tooltip = running
      ? "The daemon is running; the model loads on the first run."
      : "The daemon is not running.";
    this.item.backgroundColor = undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

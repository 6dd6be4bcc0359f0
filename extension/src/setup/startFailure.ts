// What the person sees when the daemon does not start: the reason, and the ways out (choose
// another interpreter, check the setup, open the settings, read the trace).

import * as vscode from "vscode";

export function showStartFailure(
  error: unknown,
  trace: vscode.LogOutputChannel,
): void {
  const message = error instanceof Error ? error.message : String(error);
  trace.error(message);
  const actions: Record<string, () => unknown> = {
    "Select Interpreter": () =>
      vscode.commands.executeCommand("counterfoil.selectInterpreter"),
    "Check Setup": () =>
      vscode.commands.executeCommand("counterfoil.checkSetup"),
    "Open Settings": () =>
      vscode.commands.executeCommand(
        "workbench.action.openSettings",
        "@ext:counterfoil.counterfoil",
      ),
    "Show Trace": () => trace.show(true),
  };
  void vscode.window
    .showErrorMessage(message, ...Object.keys(actions))
    .then((choice) => choice && actions[choice]());
}

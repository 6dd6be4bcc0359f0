// Before a run: asks the daemon what the model needs installed in its Python and, when something
// is missing, offers to install it in a terminal the person sees. Never installs silently.

import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import { OPEN_MODEL_SETTING, decideRuntime, terminalLine } from "./modelPrep";
import { Methods, type ModelRuntimeResult } from "../daemon/protocol";

const METHOD_NOT_FOUND = -32601;
const OPEN_ENDPOINT_SETTING = "Open the endpoint setting";

export function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * True when the model's runtime is there (or the daemon is too old to say); false when it is
 * missing, after offering the install: the run waits for the person to start it again.
 */
export async function ensureModelRuntime(
  client: DaemonClient,
  trace: vscode.LogOutputChannel,
  announceReady = false,
): Promise<boolean> {
  let result: ModelRuntimeResult;
  try {
    result = await client.request(Methods.modelRuntime, {});
  } catch (error) {
    if (errorCode(error) === METHOD_NOT_FOUND) {
      trace.info("model runtime: the daemon does not report it");
      return true;
    }
    throw error;
  }
  const decision = decideRuntime(result);
  if (decision.kind === "ready") {
    if (announceReady) {
      void vscode.window.showInformationMessage(
        result.extra
          ? `Counterfoil: the runtime for ${result.model} (counterfoil[${result.extra}]) is installed in ${result.python}.`
          : `Counterfoil: ${result.model} needs no model runtime.`,
      );
    }
    return true;
  }
  if (decision.kind === "unavailable") {
    trace.info(
      `model runtime: ${result.model} cannot run here: ${decision.reason}`,
    );
    void vscode.window
      .showErrorMessage(
        `Counterfoil run not started: ${decision.reason}.`,
        OPEN_MODEL_SETTING,
        OPEN_ENDPOINT_SETTING,
      )
      .then((answer) => {
        if (answer) {
          void vscode.commands.executeCommand(
            "workbench.action.openSettings",
            answer === OPEN_MODEL_SETTING
              ? "counterfoil.model"
              : "counterfoil.endpoint",
          );
        }
      });
    return false;
  }
  const install = `Install the model runtime into ${decision.python}`;
  // Quoted for the shell the terminal will run (PowerShell or POSIX), shown as it will be typed.
  const line = terminalLine(decision.command, vscode.env.shell);
  trace.info(
    `model runtime: ${result.model} needs ${decision.missing.join(", ")} in ${decision.python}`,
  );
  const answer = await vscode.window.showWarningMessage(
    `Counterfoil: ${result.model} needs ${decision.missing.join(", ")}, which ${decision.python} cannot import.`,
    {
      modal: true,
      detail: `This runs, in a terminal you can watch:\n${line}`,
    },
    install,
  );
  if (answer !== install) {
    void vscode.window.showWarningMessage(
      `Counterfoil run not started: ${result.model} needs the model runtime (counterfoil[${result.extra ?? ""}]) in ${decision.python}. Run "Counterfoil: Install Model Runtime" or choose another model.`,
    );
    return false;
  }
  const terminal = vscode.window.createTerminal({
    name: "Counterfoil: model runtime",
  });
  terminal.show();
  terminal.sendText(line, true);
  trace.info(`model runtime: installing with ${line}`);
  void vscode.window.showInformationMessage(
    "Counterfoil: installing the model runtime in the terminal; start the run again when it has finished.",
  );
  return false;
}

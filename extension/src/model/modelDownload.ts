// Before a run: a model that is not on disk is downloaded with a progress notification (bytes,
// rate, ETA) that Cancel stops; a failure is said once, with the way out and the setting.

import * as vscode from "vscode";
import type { DaemonClient } from "../daemon/client";
import { errorCode } from "./modelRuntime";
import {
  OPEN_MODEL_SETTING,
  downloadDetail,
  downloadPercent,
  needsDownload,
} from "./modelPrep";
import { Methods } from "../daemon/protocol";

const REQUEST_CANCELLED = -32800;
const ALREADY_RUNNING = -32004;

/** True when the model is on disk (or the daemon does not say); false when the run must wait. */
export async function ensureModelOnDisk(
  client: DaemonClient,
  trace: vscode.LogOutputChannel,
): Promise<boolean> {
  const status = await client.request(Methods.status, {});
  const endpoint = vscode.workspace
    .getConfiguration("counterfoil")
    .get<string>("endpoint");
  if (!needsDownload(status, endpoint)) {
    return true;
  }
  return downloadModel(client, trace, status.model);
}

async function downloadModel(
  client: DaemonClient,
  trace: vscode.LogOutputChannel,
  model: string,
): Promise<boolean> {
  trace.info(`download: ${model} is not on disk; downloading it`);
  try {
    await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Counterfoil: downloading ${model}`,
        cancellable: true,
      },
      async (progress, token) => {
        let shown = 0;
        const listener = client.onDownload((report) => {
          if (report.state !== "downloading") {
            return;
          }
          const percent = downloadPercent(report);
          progress.report({
            message: downloadDetail(report),
            increment: Math.max(0, percent - shown),
          });
          shown = Math.max(shown, percent);
        });
        try {
          const result = await client.request(Methods.downloadModel, {}, token);
          trace.info(`download: ${model} is in ${result.path}`);
        } finally {
          listener.dispose();
        }
      },
    );
    return true;
  } catch (error) {
    const code = errorCode(error);
    const message = error instanceof Error ? error.message : String(error);
    if (code === REQUEST_CANCELLED) {
      trace.info(`download: cancelled (${message})`);
      void vscode.window.showInformationMessage(
        `Counterfoil run not started: the download of ${model} was cancelled; what arrived is kept for the next try.`,
      );
      return false;
    }
    if (code === ALREADY_RUNNING) {
      // A run joins the download already in progress and waits for it in the daemon.
      trace.info(`download: ${message}; the run waits for it`);
      return true;
    }
    trace.error(`download failed: ${message}`);
    void vscode.window
      .showErrorMessage(`Counterfoil: ${message}`, OPEN_MODEL_SETTING)
      .then((answer) => {
        if (answer === OPEN_MODEL_SETTING) {
          void vscode.commands.executeCommand(
            "workbench.action.openSettings",
            "counterfoil.model",
          );
        }
      });
    return false;
  }
}

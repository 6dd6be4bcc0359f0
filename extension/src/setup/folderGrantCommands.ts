// A folder's grants (edits, commands, a model inside it) wait for the person's yes: the run
// panel lists what the folder's settings did, and Allow This Folder's Grants asks once, in a
// modal that says exactly what would be allowed. The daemon records the yes outside the folder
// and decides everything; this only asks and shows.

import * as vscode from "vscode";
import { commandRegistrar } from "../commandRegistrar";
import type { DaemonClient } from "../daemon/client";
import type { FolderSettingsResult } from "../daemon/protocol";
import type { RunPanel } from "../run/runPanel";
import { grantsInWords, waitingGrants } from "./folderGrants";

export const ALLOW_FOLDER_GRANTS = "counterfoil.allowFolderGrants";
const ALLOW = "Allow";

export class FolderGrantCommands implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  /** The request last said, so an unchanged one is not said again at each settings change. */
  private lastAsked = "";

  constructor(
    private readonly client: DaemonClient,
    private readonly panel: RunPanel,
  ) {
    const register = commandRegistrar(this.disposables);
    register(ALLOW_FOLDER_GRANTS, () => this.allow());
    this.disposables.push(
      client.onFolderSettings((result) => this.told(result)),
    );
  }

  /** Shows what the folder's settings did; a waiting grant is said once per change. */
  private told(result: FolderSettingsResult): void {
    this.panel.showFolderSettings(result);
    const grants = waitingGrants(result);
    const asked = JSON.stringify(grants);
    const unchanged = asked === this.lastAsked;
    this.lastAsked = asked;
    if (Object.keys(grants).length > 0 && !unchanged) {
      void vscode.window
        .showInformationMessage(
          `Counterfoil: this folder asks to allow ${grantsInWords(grants)}. Until you allow it, your own settings apply.`,
          "Review…",
        )
        .then((choice) =>
          choice
            ? vscode.commands.executeCommand(ALLOW_FOLDER_GRANTS)
            : undefined,
        );
    }
  }

  /** Asks once about what the folder asks for now; true when the person allowed it. */
  async allow(): Promise<boolean> {
    const result = await this.client.request("counterfoil/folderSettings", {});
    const grants = waitingGrants(result);
    if (Object.keys(grants).length === 0) {
      void vscode.window.showInformationMessage(
        "Counterfoil: this folder asks for nothing beyond what you allow.",
      );
      return false;
    }
    const choice = await vscode.window.showWarningMessage(
      `This folder asks to allow ${grantsInWords(grants)}.`,
      {
        modal: true,
        detail:
          "Its settings file asks for this; it came with the folder, not from you. Each edit and command still asks you. Your yes is kept outside the folder, and a changed request asks again.",
      },
      ALLOW,
    );
    if (choice !== ALLOW) {
      return false;
    }
    const after = await this.client.request("counterfoil/confirmFolderGrants", {
      grants,
      origin: "person",
    });
    this.panel.showFolderSettings(after);
    return true;
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

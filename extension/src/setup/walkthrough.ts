// The first-run walkthrough's commands: pick the interpreter, choose a model, allow writes and
// one validation command for this folder, open a copy of the demo project, and Check Setup
// (`counterfoil doctor` run with the daemon's interpreter, shown in an output channel).

import { execFile } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import * as vscode from "vscode";
import type { InterpreterSource } from "../daemon/interpreter";
import { folderWrittenValues } from "../daemon/folderFiles";
import { readDaemonSettings } from "../daemon/settings";
import {
  opensWalkthrough,
  WALKTHROUGH_ID,
  WALKTHROUGH_SHOWN,
} from "./firstRun";
import { commandRegistrar } from "../commandRegistrar";
import {
  type ModelScope,
  missingModelPath,
  modelChosenNotice,
  modelNotSetNotice,
} from "./modelChoice";

/** The demo goal the walkthrough suggests; the scripted responses answer it. */
export const DEMO_GOAL = "make tests/test_math.py pass";
const DEMO_VALIDATION = ["python", "-m", "pytest", "tests/test_math.py", "-q"];
/** True while this folder's settings allow writes and at least one command: the walkthrough's
 * permissions step is checked off by it (`onContext`), so a grant that failed checks nothing. */
export const ALLOWED_HERE = "counterfoil.allowedHere";
/** True once an interpreter is known to run the daemon (it started, or Check Setup found it):
 * the walkthrough's interpreter step is checked off by it, never by a click that picked nothing. */
export const INTERPRETER_READY = "counterfoil.interpreterReady";

/** Tells the daemon that Counterfoil itself wrote these values into the folder's settings, so
 * they count as the person's confirmed grants (the daemon keeps that outside the folder). */
/** Records values Counterfoil writes into a folder's settings as its own (`folder`: another
 * folder than the open one, the demo project's copy). */
export type RecordGrants = (
  grants: Record<string, unknown>,
  folder?: string,
) => Promise<void>;

/** `path`, or `path-2`, `path-3`, … : the first that does not exist yet. */
function freeName(path: string): string {
  let candidate = path;
  for (let n = 2; existsSync(candidate); n++) {
    candidate = `${path}-${n}`;
  }
  return candidate;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class SetupCommands implements vscode.Disposable {
  private readonly output =
    vscode.window.createOutputChannel("Counterfoil Setup");
  private readonly disposables: vscode.Disposable[] = [this.output];

  constructor(
    private readonly interpreter: InterpreterSource,
    private readonly context: vscode.ExtensionContext,
    private readonly recordGrants: RecordGrants,
  ) {
    const register = commandRegistrar(this.disposables);
    register("counterfoil.selectInterpreter", () => this.selectInterpreter());
    register("counterfoil.chooseModel", () => this.chooseModel());
    register("counterfoil.allowForFolder", () => this.allowForFolder());
    register("counterfoil.openDemo", () => this.openDemo());
    register("counterfoil.checkSetup", () => this.checkSetup());
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("counterfoil")) this.noteAllowedHere();
      }),
    );
    this.noteAllowedHere();
  }

  /** Records that Counterfoil writes these values (before writing them, so the daemon never
   * lists them as waiting); a daemon that cannot start is said, and the write still happens:
   * the folder then asks the person once. */
  private async recordWritten(
    grants: Record<string, unknown>,
    folder?: string,
  ): Promise<void> {
    try {
      await this.recordGrants(grants, folder);
    } catch (error) {
      this.output.appendLine(
        `the daemon did not record the walkthrough's grants: ${errorMessage(error)}`,
      );
    }
  }

  /** The daemon started on the interpreter, or Check Setup found it: the step is done. */
  noteInterpreterReady(): void {
    void vscode.commands.executeCommand("setContext", INTERPRETER_READY, true);
  }

  /** Sets ALLOWED_HERE from what the first folder's settings allow now. */
  private noteAllowedHere(): void {
    const config = vscode.workspace.getConfiguration(
      "counterfoil",
      this.folder,
    );
    const allowed =
      this.folder !== undefined &&
      config.get<boolean>("allowWrites") === true &&
      (config.get<unknown[]>("allowedCommands") ?? []).length > 0;
    void vscode.commands.executeCommand("setContext", ALLOWED_HERE, allowed);
  }

  /** At activation: the walkthrough opens the first time (see firstRun.ts). */
  openWalkthroughOnce(): void {
    const state = this.context.globalState;
    const first = {
      shownBefore: state.get<boolean>(WALKTHROUGH_SHOWN) === true,
      model: vscode.workspace
        .getConfiguration("counterfoil")
        .inspect<string>("model"),
      underTest: this.context.extensionMode === vscode.ExtensionMode.Test,
    };
    if (!opensWalkthrough(first)) {
      return;
    }
    void state.update(WALKTHROUGH_SHOWN, true);
    void vscode.commands.executeCommand(
      "workbench.action.openWalkthrough",
      WALKTHROUGH_ID,
      false,
    );
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private get folder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
  }

  private get demoFolder(): string {
    return join(this.context.extensionPath, "bundled", "demo");
  }

  /**
   * The demo's recorded responses, copied to the extension's global storage: a setting that
   * named the copy in the extension's own (versioned) folder would break at its next update.
   */
  private demoScript(): string {
    const kept = join(
      this.context.globalStorageUri.fsPath,
      "demo",
      "fix-app.jsonl",
    );
    mkdirSync(dirname(kept), { recursive: true });
    copyFileSync(join(this.demoFolder, "fix-app.jsonl"), kept);
    return kept;
  }

  /** The Python extension's picker when it is there; else a file picker for counterfoil.pythonPath. */
  async selectInterpreter(): Promise<void> {
    if (vscode.extensions.getExtension("ms-python.python")) {
      await vscode.commands.executeCommand("python.setInterpreter");
      return;
    }
    const picked = await vscode.window.showOpenDialog({
      title:
        "Counterfoil: the Python interpreter (3.11 or newer) that runs the daemon",
      canSelectMany: false,
      openLabel: "Use this Python",
    });
    if (picked?.[0]) {
      await vscode.workspace
        .getConfiguration("counterfoil")
        .update(
          "pythonPath",
          picked[0].fsPath,
          vscode.ConfigurationTarget.Global,
        );
    }
  }

  async chooseModel(): Promise<void> {
    const config = vscode.workspace.getConfiguration("counterfoil");
    const choice = await vscode.window.showQuickPick(
      [
        {
          label: "Scripted demo",
          detail:
            "Replays recorded responses for the demo project; no model, no download. Set for this folder only.",
          id: "scripted",
        },
        {
          label: "Local MLX model",
          detail:
            "A short name, an MLX repo id or a local model folder (needs the mlx extra).",
          id: "local",
        },
        {
          label: "A model server (endpoint)",
          detail: "An OpenAI-compatible server; opens the settings.",
          id: "endpoint",
        },
      ],
      // The walkthrough redraws its check mark as the command starts, which takes focus: the
      // picker stays open until the person answers it.
      { title: "Counterfoil: Choose a Model", ignoreFocusOut: true },
    );
    if (choice?.id === "scripted") {
      // The demo's script edits the demo's app.py: a user-level setting would replay it in
      // every project. It is set for the open folder only, or the demo copy is offered.
      if (!this.folder) {
        const open = await vscode.window.showInformationMessage(
          "The scripted demo replays the demo project's recorded run, so it is set in a copy of the demo project, not for every folder.",
          "Open Demo Project",
        );
        if (open) {
          await this.openDemo();
        }
        return;
      }
      await this.setModel(`scripted:${this.demoScript()}`, "folder");
    } else if (choice?.id === "local") {
      const model = await vscode.window.showInputBox({
        title: "Counterfoil: Local Model",
        ignoreFocusOut: true,
        value: config.get<string>("model"),
        prompt:
          "A short name or an MLX repo id is downloaded on the first run; a local folder or .gguf file must exist.",
        validateInput: (value) =>
          missingModelPath(value, existsSync, homedir()),
      });
      if (model !== undefined) {
        // Where the scripted demo goes too: this folder's settings (yours, with no folder).
        await this.setModel(model.trim(), this.folder ? "folder" : "user");
      }
    } else if (choice?.id === "endpoint") {
      await vscode.commands.executeCommand(
        "workbench.action.openSettings",
        "@ext:counterfoil.counterfoil endpoint",
      );
    }
  }

  /** Writes `counterfoil.model` and says what was set where, or why it was not. */
  private async setModel(model: string, scope: ModelScope): Promise<void> {
    try {
      if (scope === "folder") {
        await this.recordWritten({ model });
      }
      await vscode.workspace
        .getConfiguration("counterfoil")
        .update(
          "model",
          model,
          scope === "folder"
            ? vscode.ConfigurationTarget.Workspace
            : vscode.ConfigurationTarget.Global,
        );
    } catch (error) {
      void vscode.window.showErrorMessage(
        modelNotSetNotice(model, errorMessage(error)),
      );
      return;
    }
    void vscode.window.showInformationMessage(
      modelChosenNotice(model, scope, this.folder?.name),
    );
  }

  /** Writes on, and exactly one validation command, for this folder only (the two settings
   * have `resource` scope, so they can be a folder's). A setting VS Code refuses to write (a
   * settings file with errors in it, say) is said to the person, and nothing is checked off. */
  async allowForFolder(): Promise<boolean> {
    const folder = this.folder;
    if (!folder) {
      void vscode.window.showWarningMessage(
        "Open a folder first: permissions are kept per folder.",
      );
      return false;
    }
    const command = await vscode.window.showInputBox({
      title: `Counterfoil: allow writes and one validation command in ${folder.name}`,
      ignoreFocusOut: true,
      value: DEMO_VALIDATION.join(" "),
      prompt:
        "The command the agent may propose, split on spaces into an exact argv (no shell). Each run and each edit still asks you.",
    });
    const argv = command?.split(/\s+/).filter((part) => part !== "");
    if (!argv || argv.length === 0) {
      return false;
    }
    const config = vscode.workspace.getConfiguration("counterfoil", folder);
    const target = vscode.ConfigurationTarget.WorkspaceFolder;
    try {
      await this.recordWritten({ allowWrites: true, allowedCommands: [argv] });
      await config.update("allowWrites", true, target);
      await config.update("allowedCommands", [argv], target);
    } catch (error) {
      void vscode.window.showErrorMessage(
        `Counterfoil could not allow writes in ${folder.name}: ${errorMessage(error)}`,
      );
      return false;
    }
    this.noteAllowedHere();
    void vscode.window.showInformationMessage(
      `Counterfoil may propose edits and ${JSON.stringify(argv)} in ${folder.name}.`,
    );
    return true;
  }

  /** A fresh copy of the demo project, set up for the scripted model, in a folder the person
   * chooses (the home folder offered first), opened in a new window: this one stays as it is,
   * and the copy is where the person can find it again. */
  async openDemo(): Promise<void> {
    const project = join(this.demoFolder, "project");
    if (!existsSync(project)) {
      void vscode.window.showErrorMessage(
        "This build of the extension has no demo project (it is added by `npm run package`).",
      );
      return;
    }
    const chosen = await vscode.window.showOpenDialog({
      title: "Counterfoil: where should the demo project's copy go?",
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      defaultUri: vscode.Uri.file(homedir()),
      openLabel: "Put the Demo Here",
    });
    if (!chosen || chosen.length === 0) {
      return;
    }
    const copy = freeName(join(chosen[0].fsPath, "counterfoil-demo"));
    cpSync(project, copy, { recursive: true });
    mkdirSync(join(copy, ".vscode"), { recursive: true });
    const settings = {
      "counterfoil.model": `scripted:${this.demoScript()}`,
      "counterfoil.allowWrites": true,
      "counterfoil.allowedCommands": [DEMO_VALIDATION],
    };
    // Counterfoil writes these values, so they are recorded as its own before the folder opens
    // (else the copy's first run would ask for them, and the script outside it be ignored).
    await this.recordWritten(
      {
        model: settings["counterfoil.model"],
        allowWrites: true,
        allowedCommands: [DEMO_VALIDATION],
      },
      copy,
    );
    writeFileSync(
      join(copy, ".vscode", "settings.json"),
      JSON.stringify(settings, null, 2),
    );
    void vscode.window.showInformationMessage(
      `The demo project is at ${copy}; it opens in a new window. There, run "Counterfoil: Run Agent…" with: ${DEMO_GOAL}`,
    );
    await vscode.commands.executeCommand(
      "vscode.openFolder",
      vscode.Uri.file(copy),
      { forceNewWindow: true },
    );
  }

  /** Runs `counterfoil doctor` with the interpreter the daemon would use and shows its report. */
  async checkSetup(): Promise<string> {
    this.output.clear();
    this.output.show(true);
    let report: string;
    try {
      const launch = await this.interpreter.resolve(this.folder, "doctor");
      this.noteInterpreterReady();
      const args = launch.argv.slice(1);
      // The settings as the daemon gets them, by where each was written: the doctor applies
      // the same rules (the folder's endpoint is never tried) and lists the folder's values.
      const settings = readDaemonSettings(
        vscode.workspace.getConfiguration("counterfoil", this.folder),
        folderWrittenValues(this.folder?.uri, vscode.workspace.workspaceFile),
      );
      const options: Array<[string, unknown]> = [
        ["--root", this.folder?.uri.fsPath],
        ["--settings", JSON.stringify(settings)],
      ];
      for (const [flag, value] of options) {
        if (typeof value === "string" && value !== "") {
          args.push(flag, value);
        }
      }
      this.output.appendLine(`$ ${[launch.argv[0], ...args].join(" ")}`);
      this.output.appendLine(`(interpreter: ${launch.description})`);
      report = await new Promise<string>((resolve) => {
        execFile(
          launch.argv[0],
          args,
          { env: launch.env, timeout: 60_000 },
          (error, stdout, stderr) =>
            resolve(
              `${stdout}${stderr}${error && !stdout ? `\n${error.message}` : ""}`,
            ),
        );
      });
    } catch (error) {
      report = `Counterfoil cannot start its daemon: ${errorMessage(error)}`;
    }
    this.output.appendLine(report);
    return report;
  }
}

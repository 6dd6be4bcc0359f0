// Which Python runs the daemon: counterfoil.serverCommand (an override), else
// counterfoil.pythonPath (both from the person's own settings only, never a folder's), else the Python extension's active environment for the folder, else
// python3 or python on PATH. Fires onDidChange when any of those changes, so the daemon restarts.

import { execFile } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { PythonExtension } from "@vscode/python-extension";
import * as vscode from "vscode";
import {
  type DaemonLaunch,
  VERSION_PROBE,
  firstOnPath,
  isArgv,
  pythonLaunch,
  versionProblem,
} from "./launch";
import { machineValue } from "./settings";

const PYTHON_EXTENSION_ID = "ms-python.python";

export class LaunchProblem extends Error {}

function isExecutable(candidate: string): boolean {
  try {
    accessSync(candidate, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function probeVersion(python: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      python,
      ["-c", VERSION_PROBE],
      { timeout: 15_000 },
      (error, stdout, stderr) =>
        error
          ? reject(
              new LaunchProblem(
                `Counterfoil could not run ${python}: ${stderr.trim() || error.message}`,
              ),
            )
          : resolve(stdout),
    );
  });
}

export class InterpreterSource implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [this.changed];
  private pythonApi: Promise<PythonExtension | undefined> | undefined;
  /** Fires when the interpreter that would be chosen may have changed. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly extensionPath: string) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (
          event.affectsConfiguration("counterfoil.serverCommand") ||
          event.affectsConfiguration("counterfoil.pythonPath") ||
          event.affectsConfiguration("python.defaultInterpreterPath")
        ) {
          this.changed.fire();
        }
      }),
    );
  }

  /** The bundled daemon's libraries, when this build of the extension has them. */
  get bundledLibs(): string | undefined {
    const libs = join(this.extensionPath, "bundled", "libs");
    return existsSync(libs) ? libs : undefined;
  }

  /** How to run `counterfoil SUBCOMMAND` for this folder; throws LaunchProblem with the reason. */
  async resolve(
    folder: vscode.WorkspaceFolder | undefined,
    subcommand = "serve",
  ): Promise<DaemonLaunch> {
    const config = vscode.workspace.getConfiguration("counterfoil", folder);
    const serverCommand = machineValue(
      config.inspect<unknown>("serverCommand"),
    );
    if (Array.isArray(serverCommand) && serverCommand.length > 0) {
      if (!isArgv(serverCommand)) {
        throw new LaunchProblem(
          `counterfoil.serverCommand must be an array of non-empty strings, not ${JSON.stringify(serverCommand)}.`,
        );
      }
      const argv =
        subcommand === "serve"
          ? [...serverCommand]
          : [...serverCommand.slice(0, -1), subcommand];
      return {
        argv,
        env: process.env,
        description: `${argv.join(" ")} (counterfoil.serverCommand)`,
      };
    }
    const [python, source] = await this.choosePython(folder);
    const problem = versionProblem(python, await probeVersion(python));
    if (problem) {
      throw new LaunchProblem(problem);
    }
    return pythonLaunch(
      python,
      source,
      this.bundledLibs,
      process.env,
      subcommand,
    );
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  private async choosePython(
    folder: vscode.WorkspaceFolder | undefined,
  ): Promise<[string, string]> {
    const configured = machineValue(
      vscode.workspace
        .getConfiguration("counterfoil", folder)
        .inspect<unknown>("pythonPath"),
    );
    if (typeof configured === "string" && configured.trim() !== "") {
      return [configured, "counterfoil.pythonPath"];
    }
    const api = await this.pythonExtension();
    if (api) {
      const active = api.environments.getActiveEnvironmentPath(folder?.uri);
      const resolved = await api.environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) {
        return [executable, "the Python extension's active interpreter"];
      }
    }
    const defaultPath = vscode.workspace
      .getConfiguration("python", folder)
      .get<unknown>("defaultInterpreterPath");
    if (
      typeof defaultPath === "string" &&
      defaultPath.trim() !== "" &&
      defaultPath !== "python"
    ) {
      return [defaultPath, "python.defaultInterpreterPath"];
    }
    const onPath = firstOnPath(
      ["python3", "python"],
      process.env.PATH,
      isExecutable,
    );
    if (!onPath) {
      throw new LaunchProblem(
        "Counterfoil found no Python: install the Python extension and select an interpreter, put python3 on PATH, or set counterfoil.pythonPath.",
      );
    }
    return [onPath, `${onPath.endsWith("3") ? "python3" : "python"} on PATH`];
  }

  /** The Python extension's API when it is installed; it also tells us when the user switches. */
  private pythonExtension(): Promise<PythonExtension | undefined> {
    if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
      return Promise.resolve(undefined);
    }
    this.pythonApi ??= PythonExtension.api().then(
      (api) => {
        this.disposables.push(
          api.environments.onDidChangeActiveEnvironmentPath(() =>
            this.changed.fire(),
          ),
        );
        return api;
      },
      () => undefined,
    );
    return this.pythonApi;
  }
}

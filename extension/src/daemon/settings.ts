// Settings are read in one place: what the daemon gets as initializationOptions and on
// workspace/didChangeConfiguration. The values go out as written, each by where it was
// written (VS Code's inspect(): the person's own, the workspace's, the folder's); the daemon
// validates them, applies what a folder may do with each, and says which are wrong
// (window/showMessage), so no default and no policy is decided here.

import manifest from "../../package.json";

/** The part of vscode.WorkspaceConfiguration this module needs (so it tests without VS Code). */
export interface SettingsSource {
  inspect<T>(section: string): InspectedSetting<T> | undefined;
}

/** Settings of the editor alone (how the daemon is started), which the daemon never reads. */
export const EDITOR_SETTING_KEYS = ["serverCommand", "pythonPath"] as const;

/** What `WorkspaceConfiguration.inspect` says of one setting, the part read here. */
export interface InspectedSetting<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * A setting that starts a program (`serverCommand`, `pythonPath`: `machine` scope in the
 * manifest) from the person's own settings only, never a workspace's or a folder's: a command
 * the agent ran, or the repository itself, can write `.vscode/settings.json`.
 */
export function machineValue<T>(
  inspected: InspectedSetting<T> | undefined,
): T | undefined {
  return inspected?.globalValue;
}

const EDITOR_ONLY: ReadonlySet<string> = new Set(EDITOR_SETTING_KEYS);
const PREFIX = "counterfoil.";

/**
 * The daemon's settings, keys without the `counterfoil.` prefix: every setting the manifest
 * contributes but the editor's own. The manifest's entries are generated from the daemon's
 * settings table (a test holds package.json to it), so the keys are written once.
 */
export const DAEMON_SETTING_KEYS: readonly string[] = Object.keys(
  manifest.contributes.configuration.properties,
)
  .filter((key) => key.startsWith(PREFIX))
  .map((key) => key.slice(PREFIX.length))
  .filter((key) => !EDITOR_ONLY.has(key));

export type SettingsLayer = Record<string, unknown>;

/** The daemon's settings by where they were written; the daemon applies each setting's rule. */
export interface DaemonSettings {
  layers: {
    user: SettingsLayer;
    workspace: SettingsLayer;
    folder: SettingsLayer;
  };
}

/** Reads `counterfoil.*` for the daemon, each value in the layer it was written in; a key that
 * is not set is left out (the daemon's default). `written`: the person's-alone values the
 * workspace's and folder's files set, which VS Code drops (`folderFiles.ts`), for the daemon
 * to list as ignored. */
export function readDaemonSettings(
  config: SettingsSource,
  written: { workspace: SettingsLayer; folder: SettingsLayer } = {
    workspace: {},
    folder: {},
  },
): DaemonSettings {
  const layers: DaemonSettings["layers"] = {
    user: {},
    workspace: { ...written.workspace },
    folder: { ...written.folder },
  };
  for (const key of DAEMON_SETTING_KEYS) {
    const inspected = config.inspect<unknown>(key);
    const written: [SettingsLayer, unknown][] = [
      [layers.user, inspected?.globalValue],
      [layers.workspace, inspected?.workspaceValue],
      [layers.folder, inspected?.workspaceFolderValue],
    ];
    for (const [layer, value] of written) {
      if (value !== undefined) {
        layer[key] = value;
      }
    }
  }
  return { layers };
}

// Settings are read in one place: what the daemon gets as initializationOptions and on
// workspace/didChangeConfiguration. The values go out as the person wrote them; the daemon
// validates them and says which are wrong (window/showMessage), so no default is decided here.

import manifest from "../../package.json";

/** The part of vscode.WorkspaceConfiguration this module needs (so it tests without VS Code). */
export interface SettingsSource {
  get<T>(section: string): T | undefined;
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

export type DaemonSettings = Record<string, unknown>;

/** Reads `counterfoil.*` for the daemon; a key that is not set is left out (the daemon's default). */
export function readDaemonSettings(config: SettingsSource): DaemonSettings {
  const settings: DaemonSettings = {};
  for (const key of DAEMON_SETTING_KEYS) {
    const value = config.get<unknown>(key);
    if (value !== undefined) {
      settings[key] = value;
    }
  }
  return settings;
}

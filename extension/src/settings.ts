// Settings are read in one place: what the daemon gets as initializationOptions and on
// workspace/didChangeConfiguration. The values go out as the person wrote them; the daemon
// validates them and says which are wrong (window/showMessage), so no default is decided here.

/** The part of vscode.WorkspaceConfiguration this module needs (so it tests without VS Code). */
export interface SettingsSource {
  get<T>(section: string): T | undefined;
}

/** The daemon's settings, keys without the `counterfoil.` prefix (see docs/protocol.md). */
export const DAEMON_SETTING_KEYS = [
  "model",
  "allowWrites",
  "allowedCommands",
  "receiptLog",
  "maxWriteBytes",
  "commandTimeoutSeconds",
  "maxSteps",
  "maxTokens",
  "constrainedDecoding",
  "confirmTimeoutSeconds",
  "endpoint",
  "apiKeyEnv",
  "allowInsecureHttp",
  "useEnvironmentProxy",
  "schemaMode",
  "endpointTimeoutSeconds",
  "contextTokens",
  "searchFiles",
  "protectedPatterns",
  "passEnvironment",
  "limitCpuSeconds",
  "limitMemoryBytes",
  "limitProcesses",
  "maxCommandOutputBytes",
  "commandSandbox",
  "allowNetwork",
  "maxInlineChars",
  "agentsFile",
] as const;

export type DaemonSettings = Partial<
  Record<(typeof DAEMON_SETTING_KEYS)[number], unknown>
>;

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

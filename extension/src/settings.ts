// Settings are read in one place: what the daemon gets as initializationOptions and on
// workspace/didChangeConfiguration, and the command that starts it.

/** The part of vscode.WorkspaceConfiguration this module needs (so it tests without VS Code). */
export interface SettingsSource {
  get<T>(section: string): T | undefined;
}

/** The daemon's settings, keys without the `counterfoil.` prefix (see DESIGN.md). */
export interface DaemonSettings {
  model: string;
  allowWrites: boolean;
  allowedCommands: string[][];
  receiptLog?: string;
  maxWriteBytes: number;
  commandTimeoutSeconds: number;
  maxSteps: number;
  maxTokens: number;
  constrainedDecoding: boolean;
  confirmTimeoutSeconds: number;
}

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
] as const;

const DEFAULTS: DaemonSettings = {
  model: "qwen3-4b",
  allowWrites: false,
  allowedCommands: [],
  maxWriteBytes: 65536,
  commandTimeoutSeconds: 30,
  maxSteps: 8,
  maxTokens: 1024,
  constrainedDecoding: true,
  confirmTimeoutSeconds: 600,
};

function isArgv(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((part) => typeof part === "string" && part !== "")
  );
}

function pick<T>(
  value: unknown,
  valid: (candidate: unknown) => boolean,
  fallback: T,
): T {
  return valid(value) ? (value as T) : fallback;
}

const isPositiveNumber = (value: unknown): boolean =>
  typeof value === "number" && Number.isFinite(value) && value > 0;
const isPositiveInteger = (value: unknown): boolean =>
  isPositiveNumber(value) && Number.isInteger(value);

/**
 * Reads `counterfoil.*`. Values of the wrong type fall back to the default rather than reach
 * the daemon; commands that are not argv arrays are dropped.
 */
export function readDaemonSettings(config: SettingsSource): DaemonSettings {
  const commands = config.get<unknown>("allowedCommands");
  const receiptLog = config.get<unknown>("receiptLog");
  const settings: DaemonSettings = {
    model: pick(
      config.get("model"),
      (v) => typeof v === "string" && v.trim() !== "",
      DEFAULTS.model,
    ),
    allowWrites: pick(
      config.get("allowWrites"),
      (v) => typeof v === "boolean",
      DEFAULTS.allowWrites,
    ),
    allowedCommands: Array.isArray(commands)
      ? commands.filter(isArgv)
      : DEFAULTS.allowedCommands,
    maxWriteBytes: pick(
      config.get("maxWriteBytes"),
      isPositiveInteger,
      DEFAULTS.maxWriteBytes,
    ),
    commandTimeoutSeconds: pick(
      config.get("commandTimeoutSeconds"),
      isPositiveNumber,
      DEFAULTS.commandTimeoutSeconds,
    ),
    maxSteps: pick(
      config.get("maxSteps"),
      isPositiveInteger,
      DEFAULTS.maxSteps,
    ),
    maxTokens: pick(
      config.get("maxTokens"),
      isPositiveInteger,
      DEFAULTS.maxTokens,
    ),
    constrainedDecoding: pick(
      config.get("constrainedDecoding"),
      (v) => typeof v === "boolean",
      DEFAULTS.constrainedDecoding,
    ),
    confirmTimeoutSeconds: pick(
      config.get("confirmTimeoutSeconds"),
      isPositiveNumber,
      DEFAULTS.confirmTimeoutSeconds,
    ),
  };
  if (typeof receiptLog === "string" && receiptLog.trim() !== "") {
    settings.receiptLog = receiptLog;
  }
  return settings;
}

/**
 * The argv that starts the daemon: `counterfoil.serverCommand` when set, else the configured
 * Python interpreter (or `python3`) with `-m counterfoil serve`.
 */
export function resolveServerCommand(
  serverCommand: unknown,
  pythonPath: unknown,
): string[] {
  if (isArgv(serverCommand)) {
    return [...serverCommand];
  }
  const python =
    typeof pythonPath === "string" &&
    pythonPath.trim() !== "" &&
    pythonPath !== "python"
      ? pythonPath
      : "python3";
  return [python, "-m", "counterfoil", "serve"];
}

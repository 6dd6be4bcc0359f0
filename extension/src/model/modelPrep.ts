// What to do before a run so the model can load: install its runtime, download its files. Words
// for a download's progress. Pure, unit-tested; modelRuntime.ts and modelDownload.ts act on it.

import type {
  DownloadProgress,
  ModelRuntimeResult,
  StatusResult,
} from "../daemon/protocol";

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** `2.3 GiB`, `512 B`: binary units, one decimal above bytes. */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0
    ? `${Math.round(value)} B`
    : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** `1 min 20 s`, `2 h 5 min`, `7 s`. */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = total % 60;
  if (hours > 0) {
    return `${hours} h ${minutes} min`;
  }
  if (minutes > 0) {
    return `${minutes} min ${rest} s`;
  }
  return `${rest} s`;
}

/** Whole per cent of the download that is on disk; 0 while the total is unknown. */
export function downloadPercent(progress: DownloadProgress): number {
  if (!(progress.total > 0)) {
    return 0;
  }
  return Math.min(100, Math.floor((progress.bytes / progress.total) * 100));
}

/** The status bar's words: `downloading 38 % of 2.3 GiB`. */
export function describeDownload(progress: DownloadProgress): string {
  return `downloading ${downloadPercent(progress)} % of ${formatBytes(progress.total)}`;
}

/** The notification's line: `1.2 GiB of 2.3 GiB, 12.0 MiB/s, 1 min 20 s left`. */
export function downloadDetail(progress: DownloadProgress): string {
  const parts = [
    `${formatBytes(progress.bytes)} of ${formatBytes(progress.total)}`,
  ];
  if (typeof progress.rate === "number") {
    parts.push(`${formatBytes(progress.rate)}/s`);
  }
  if (typeof progress.etaSeconds === "number") {
    parts.push(`${formatDuration(progress.etaSeconds)} left`);
  }
  return parts.join(", ");
}

/** The button that opens `counterfoil.model` when a model cannot be had. */
export const OPEN_MODEL_SETTING = "Open the model setting";

export type RuntimeDecision =
  | { kind: "ready" }
  | { kind: "unavailable"; reason: string }
  | { kind: "install"; python: string; command: string[]; missing: string[] };

/**
 * Whether the daemon's Python lacks what the model needs, and the command that installs it; or,
 * where no install can help (no MLX build for this platform), the daemon's reason.
 */
export function decideRuntime(result: ModelRuntimeResult): RuntimeDecision {
  if (result.missing.length > 0 && result.unavailable) {
    return { kind: "unavailable", reason: result.unavailable };
  }
  if (result.missing.length > 0 && result.modelAvailable === false) {
    // An install could not help: the files cannot be had either. Both are said at once.
    return {
      kind: "unavailable",
      reason: `${result.model} needs ${result.missing.join(", ")} and its files, and the files cannot be had: ${result.modelDetail ?? "not cached and not downloadable"}`,
    };
  }
  if (
    result.missing.length === 0 ||
    !Array.isArray(result.command) ||
    result.command.length === 0
  ) {
    return { kind: "ready" };
  }
  return {
    kind: "install",
    python: result.python,
    command: result.command,
    missing: result.missing,
  };
}

/**
 * Download first only when the daemon says the model is missing (null: not a valid name) and
 * no model server is set: with an endpoint the model's name is the server's, not the hub's.
 */
export function needsDownload(
  status: Partial<StatusResult>,
  endpoint: string | undefined,
): boolean {
  return status.modelOnDisk === false && !endpoint?.trim();
}

/**
 * An argv as one POSIX shell line: words that need it are single-quoted, or double-quoted when
 * they hold a single quote and nothing a double-quoted word expands (`sys_platform == 'linux'`).
 */
export function shellLine(argv: string[]): string {
  return argv.map(posixWord).join(" ");
}

function posixWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) {
    return word;
  }
  if (word.includes("'") && !/["$`\\!]/.test(word)) {
    return `"${word}"`;
  }
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The quoting a terminal's shell reads. */
export type ShellKind = "posix" | "powershell";

/** PowerShell (pwsh, powershell.exe) from the terminal's shell path; any other shell is POSIX. */
export function shellKind(shellPath: string | undefined): ShellKind {
  const name = (shellPath ?? "")
    .split(/[\\/]/)
    .pop()!
    .toLowerCase()
    .replace(/\.exe$/, "");
  return name === "pwsh" || name === "powershell" || name.startsWith("pwsh-")
    ? "powershell"
    : "posix";
}

// PowerShell reads these as single quotes too, so each is doubled inside a quoted word.
const POWERSHELL_QUOTES = /['\u2018\u2019\u201a\u201b]/g;

/**
 * An argv as one PowerShell line: `&` runs the first word as a program even when it is quoted (a
 * path with spaces), and words PowerShell would read specially (`;`, `$`, `,`, `@`, brackets,
 * quotes, spaces) are single-quoted, where nothing is expanded.
 */
export function powershellLine(argv: string[]): string {
  const words = argv.map((word) =>
    /^[\w+=:./\\-]+$/.test(word)
      ? word
      : `'${word.replace(POWERSHELL_QUOTES, (quote) => quote + quote)}'`,
  );
  return ["&", ...words].join(" ");
}

/** The line to type into a terminal whose shell is `shellPath` (vscode.env.shell). */
export function terminalLine(
  argv: string[],
  shellPath: string | undefined,
): string {
  return shellKind(shellPath) === "powershell"
    ? powershellLine(argv)
    : shellLine(argv);
}

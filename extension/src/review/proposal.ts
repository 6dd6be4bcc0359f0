// What an approval shows: the proposed file text the daemon sent, and the words around it. Pure
// functions, no VS Code, so they are unit-tested on their own.

import type {
  ChangedFile,
  ChangeSetPreview,
  CommandPreview,
  ConfirmParams,
  EditPreview,
} from "../daemon/protocol";
import { argvText } from "../argvText";
import { shownPath } from "../shownPath";
import { mcpSubject } from "./mcpProposal";

export class ProposalError extends Error {}

/**
 * The whole proposed file, exactly as the daemon will write it (`proposedText`). Nothing is
 * applied to the live file, so what is shown cannot drift from what the digest covers.
 */
export function proposedFileText(preview: EditPreview): string {
  if (typeof preview.proposedText !== "string") {
    throw new ProposalError("the preview carries no proposed text");
  }
  return preview.proposedText;
}

/**
 * Why the file on disk is not the one the proposal was made from (`diskSha256`: SHA-256 of its
 * bytes, null when it does not exist), or undefined when it is.
 */
export function baseMismatch(
  preview: Pick<EditPreview, "path" | "baseSha256">,
  diskSha256: string | null,
): string | undefined {
  if (preview.baseSha256 === null) {
    return diskSha256 === null
      ? undefined
      : `${preview.path} exists now, and the proposal would create it.`;
  }
  if (diskSha256 === null) {
    return `${preview.path} was removed after the model read it.`;
  }
  return diskSha256 === preview.baseSha256
    ? undefined
    : `${preview.path} changed on disk after the model read it.`;
}

export function proposalSubject(params: ConfirmParams): string {
  const preview = params.preview;
  if (preview?.kind === "edit") {
    return `${params.tool} ${shownPath(preview.path)}`;
  }
  if (preview?.kind === "command") {
    return `${params.tool} ${argvText(preview.argv)}`;
  }
  if (preview?.kind === "changes") {
    const what = preview.ran
      ? `${params.tool} ${argvText(preview.ran.argv)}`
      : `${params.tool} ${preview.reverts ?? ""}`.trim();
    return `${what} (${fileCount(preview.files.length)})`;
  }
  if (preview?.kind === "mcp_definition" || preview?.kind === "mcp_call") {
    return mcpSubject(preview);
  }
  return params.tool;
}

function fileCount(count: number): string {
  return `${count} file${count === 1 ? "" : "s"}`;
}

/** The call id a diff side's URI query names (`call=call-3&side=now`), if any. */
export function callOfQuery(query: string): string | undefined {
  return new URLSearchParams(query).get("call") ?? undefined;
}

/** Title of a change set's multi-file diff: what it is, and which side is which. */
export function changeSetTitle(
  params: ConfirmParams,
  preview: ChangeSetPreview,
): string {
  if (preview.ran) {
    return `Review ${argvText(preview.ran.argv)} (${params.toolCallId}): root ↔ the command's changes`;
  }
  return `Revert ${preview.reverts ?? params.toolCallId} (${params.toolCallId}): now ↔ restored`;
}

/** How a reviewed command ran, in words: "exit status 0, in a copy (bubblewrap), no network". */
export function ranDetail(ran: NonNullable<ChangeSetPreview["ran"]>): string {
  const ended = ran.timedOut
    ? "timed out"
    : ran.exitStatus === null
      ? "stopped"
      : `exit status ${ran.exitStatus}`;
  const where = ran.mode === "review" ? "in a copy of the root" : ran.mode;
  return `${ended}, ${where} (${ran.mechanism}), ${ran.network ? "with" : "no"} network`;
}

/** What one side of a file's diff shows: its text, or why there is none. */
export function changeSideText(
  file: ChangedFile,
  side: "now" | "after",
): string {
  const text = side === "now" ? file.currentText : file.proposedText;
  if (text !== null) {
    return text;
  }
  const absent =
    side === "now" ? file.expectedSha256 === null : file.removesFile;
  return absent ? "" : "(binary or not UTF-8: not shown)\n";
}

/** The question beside the diff: what Accept does, and what it leaves alone. */
export function changeSetQuestion(
  params: ConfirmParams,
  preview: ChangeSetPreview,
): string {
  const action = preview.ran
    ? `Apply the changes of ${argvText(preview.ran.argv)} (${ranDetail(preview.ran)}) to the root`
    : `Revert ${preview.reverts ?? params.toolCallId}`;
  const alone =
    preview.leftAlone.length > 0
      ? ` Left alone: ${preview.leftAlone.map((item) => `${shownPath(item.path)} (${item.why})`).join(", ")}.`
      : "";
  const modes = preview.files.filter((file) => file.changesMode);
  const modeText =
    modes.length > 0 ? ` Modes: ${modes.map(modeChange).join(", ")}.` : "";
  const made = preview.files.flatMap((file) => file.madeFolders ?? []);
  const madeText =
    made.length > 0
      ? ` Removes the folders the command made, when empty: ${made.map((folder) => `${shownPath(folder)}/`).join(", ")}.`
      : "";
  // A reviewed set is applied whole or not at all; a revert writes each file that still holds
  // what the command left.
  const how = preview.ran
    ? "all or nothing"
    : "each only if unchanged since the command";
  return `${action}: ${fileCount(preview.files.length)}, ${how} (${params.toolCallId}).${modeText}${madeText}${alone}`;
}

/** One file's change of permission bits: "run.sh 0644 → 0777 (world-writable)". */
export function modeChange(file: ChangedFile): string {
  const octal = (mode: number | null): string =>
    mode === null ? "unknown" : mode.toString(8).padStart(4, "0");
  const was =
    file.expectedSha256 === null ? "new file" : octal(file.currentMode);
  const bits = file.mode ?? 0;
  const named = [
    [0o4000, "setuid"],
    [0o2000, "setgid"],
    [0o0002, "world-writable"],
  ]
    .filter(([bit]) => (bits & (bit as number)) !== 0)
    .map(([, name]) => name);
  const extra = named.length > 0 ? ` (${named.join(", ")})` : "";
  return `${shownPath(file.path)} ${was} → ${octal(file.mode)}${extra}`;
}

/** Title of the approval diff: tool, path and call id. */
export function diffTitle(params: ConfirmParams, preview: EditPreview): string {
  if (preview.reverts) {
    const folders = preview.newFolders?.length
      ? ` with its empty folders ${preview.newFolders.map((folder) => `${folder}/`).join(", ")}`
      : "";
    const after = preview.removesFile ? `removed${folders}` : "restored";
    return `${params.tool} ${shownPath(preview.path)} (${params.toolCallId}, undoes ${preview.reverts}): now ↔ ${after}`;
  }
  const folders = (preview.newFolders ?? []).map((folder) => `${folder}/`);
  const side =
    preview.baseSha256 === null
      ? folders.length > 0
        ? `new file in new folder${folders.length > 1 ? "s" : ""} ${folders.join(", ")}`
        : "new file"
      : "as read";
  return `${params.tool} ${shownPath(preview.path)} (${params.toolCallId}): ${side} ↔ proposed`;
}

/** Exact argv and cwd, shown where a command is asked (the notification, the run panel). */
export function commandDetail(preview: CommandPreview): string {
  const lines = [
    `argv: ${JSON.stringify(preview.argv)}`,
    `cwd: ${preview.cwd}`,
    `timeout: ${preview.timeoutSeconds} s`,
  ];
  if (preview.runsAs) {
    lines.push(runsAsLine(preview.runsAs));
  }
  lines.push(shellLine(preview.argv));
  return lines.join("\n");
}

/** The shells an argv may start, by the program's file name. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish"]);

/** The shell an argv starts, through `env` (its options and `NAME=value` words skipped) or
 * not, and whether a `-c` (alone or in a cluster: `-lc`, `-ec`) makes its text shell code. */
function startedShell(
  argv: readonly string[],
): { shell: string; code: boolean } | undefined {
  const name = (word: string | undefined): string =>
    word?.split("/").pop() ?? "";
  let at = 0;
  if (name(argv[0]) === "env") {
    at = 1;
    while (at < argv.length && /^-|=/.test(argv[at])) at += 1;
  }
  const shell = name(argv[at]);
  if (!SHELLS.has(shell)) {
    return undefined;
  }
  const options = argv.slice(at + 1);
  const end = options.findIndex((word) => !/^[-+]/.test(word) || word === "--");
  const code = (end === -1 ? options : options.slice(0, end)).some((word) =>
    /^-[a-zA-Z]*c[a-zA-Z]*$/.test(word),
  );
  return { shell, code };
}

/** Whether Counterfoil adds a shell (never), and whether the argv starts one itself
 * (`sh -c '…'`, `env bash -lc '…'`: its text is then shell code; `sh build.sh`: a script). */
function shellLine(argv: readonly string[]): string {
  const started = startedShell(argv);
  if (started?.code) {
    return `Starts the shell ${started.shell}, which runs the text after -c as shell code (Counterfoil adds no shell of its own); the output is recorded in a receipt.`;
  }
  if (started) {
    return `Starts the shell ${started.shell}, which runs the script it is given (Counterfoil adds no shell of its own); the output is recorded in a receipt.`;
  }
  return "Runs without a shell; the output is recorded in a receipt.";
}

/** How a command will run, before it runs: "Runs in review mode: on a copy of the root …". */
export function runsAsLine(
  runsAs: NonNullable<CommandPreview["runsAs"]>,
): string {
  const network = runsAs.network ? "with the network" : "no network";
  if (runsAs.mode === "review") {
    return `Runs in review mode: on a copy of the root (${runsAs.mechanism}), ${network}; its changes come back for your review and nothing lands before you accept them.`;
  }
  if (runsAs.mode === "confine") {
    return `Runs confined (${runsAs.mechanism}): it writes only inside the root, ${network}.`;
  }
  return "Runs unconfined: as you, in the root, with your permissions and the network.";
}

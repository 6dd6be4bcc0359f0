// What an approval shows: the proposed file text the daemon sent, and the words around it. Pure
// functions, no VS Code, so they are unit-tested on their own.

import type {
  ChangedFile,
  ChangeSetPreview,
  CommandPreview,
  ConfirmParams,
  EditPreview,
} from "../daemon/protocol";

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
    return `${params.tool} ${preview.path}`;
  }
  if (preview?.kind === "command") {
    return `${params.tool} ${preview.argv.join(" ")}`;
  }
  if (preview?.kind === "changes") {
    const what = preview.ran
      ? `${params.tool} ${preview.ran.argv.join(" ")}`
      : `${params.tool} ${preview.reverts ?? ""}`.trim();
    return `${what} (${fileCount(preview.files.length)})`;
  }
  return params.tool;
}

function fileCount(count: number): string {
  return `${count} file${count === 1 ? "" : "s"}`;
}

/** Title of a change set's multi-file diff: what it is, and which side is which. */
export function changeSetTitle(
  params: ConfirmParams,
  preview: ChangeSetPreview,
): string {
  if (preview.ran) {
    return `Review ${preview.ran.argv.join(" ")} (${params.toolCallId}): root ↔ the command's changes`;
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
    ? `Apply the changes of ${preview.ran.argv.join(" ")} (${ranDetail(preview.ran)}) to the root`
    : `Revert ${preview.reverts ?? params.toolCallId}`;
  const alone =
    preview.leftAlone.length > 0
      ? ` Left alone: ${preview.leftAlone.map((item) => `${item.path} (${item.why})`).join(", ")}.`
      : "";
  // A reviewed set is applied whole or not at all; a revert writes each file that still holds
  // what the command left.
  const how = preview.ran
    ? "all or nothing"
    : "each only if unchanged since the command";
  return `${action}: ${fileCount(preview.files.length)}, ${how} (${params.toolCallId}).${alone}`;
}

/** Title of the approval diff: tool, path and call id. */
export function diffTitle(params: ConfirmParams, preview: EditPreview): string {
  if (preview.reverts) {
    const folders = preview.newFolders?.length
      ? ` with its empty folders ${preview.newFolders.map((folder) => `${folder}/`).join(", ")}`
      : "";
    const after = preview.removesFile ? `removed${folders}` : "restored";
    return `${params.tool} ${preview.path} (${params.toolCallId}, undoes ${preview.reverts}): now ↔ ${after}`;
  }
  const folders = (preview.newFolders ?? []).map((folder) => `${folder}/`);
  const side =
    preview.baseSha256 === null
      ? folders.length > 0
        ? `new file in new folder${folders.length > 1 ? "s" : ""} ${folders.join(", ")}`
        : "new file"
      : "as read";
  return `${params.tool} ${preview.path} (${params.toolCallId}): ${side} ↔ proposed`;
}

/** Exact argv and cwd, shown in the modal that approves a command. */
export function commandDetail(preview: CommandPreview): string {
  return [
    `argv: ${JSON.stringify(preview.argv)}`,
    `cwd: ${preview.cwd}`,
    `timeout: ${preview.timeoutSeconds} s`,
    "Runs without a shell; the output is recorded in a receipt.",
  ].join("\n");
}

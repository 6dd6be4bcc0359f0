// What an approval shows: the proposed file text built from the daemon's WorkspaceEdit, and the
// words around it. Pure functions, no VS Code, so they are unit-tested on their own.

import type {
  CommandPreview,
  ConfirmParams,
  CreateFile,
  EditPreview,
  Position,
  TextDocumentEdit,
  TextEdit,
  WorkspaceEdit,
} from "./protocol";

export interface EditProposal {
  /** URI of the file the edit targets, as the daemon wrote it. */
  targetUri: string;
  /** True when the edit creates the file (a CreateFile precedes the text edit). */
  createsFile: boolean;
  /** The text edits for the target, in the order the daemon sent them. */
  edits: TextEdit[];
}

export class ProposalError extends Error {}

function isCreateFile(change: unknown): change is CreateFile {
  return (change as CreateFile | undefined)?.kind === "create";
}

function isTextDocumentEdit(change: unknown): change is TextDocumentEdit {
  const candidate = change as TextDocumentEdit | undefined;
  return (
    typeof candidate?.textDocument?.uri === "string" &&
    Array.isArray(candidate.edits)
  );
}

/** Reads the single-file WorkspaceEdit an edit approval carries; anything else is refused. */
export function readEditProposal(edit: WorkspaceEdit): EditProposal {
  let createsFile = false;
  let targetUri: string | undefined;
  const edits: TextEdit[] = [];
  const claim = (uri: string): void => {
    if (targetUri !== undefined && targetUri !== uri) {
      throw new ProposalError("the proposal changes more than one file");
    }
    targetUri = uri;
  };
  for (const change of edit.documentChanges ?? []) {
    if (isCreateFile(change)) {
      claim(change.uri);
      createsFile = true;
    } else if (isTextDocumentEdit(change)) {
      claim(change.textDocument.uri);
      edits.push(...change.edits);
    } else {
      throw new ProposalError(
        `unsupported change in the proposal: ${JSON.stringify(change)}`,
      );
    }
  }
  for (const [uri, uriEdits] of Object.entries(edit.changes ?? {})) {
    claim(uri);
    edits.push(...uriEdits);
  }
  if (targetUri === undefined) {
    throw new ProposalError("the proposal changes no file");
  }
  return { targetUri, createsFile, edits };
}

/** Offset in `text` of an LSP position (UTF-16 code units, like JavaScript strings). */
export function offsetAt(text: string, position: Position): number {
  let offset = 0;
  for (let line = 0; line < position.line; line += 1) {
    const newline = text.indexOf("\n", offset);
    if (newline === -1) {
      return text.length;
    }
    offset = newline + 1;
  }
  let lineEnd = text.indexOf("\n", offset);
  if (lineEnd === -1) {
    lineEnd = text.length;
  } else if (lineEnd > offset && text[lineEnd - 1] === "\r") {
    lineEnd -= 1;
  }
  return Math.min(offset + Math.max(0, position.character), lineEnd);
}

/** Applies LSP text edits to `text`; positions refer to the original text, as in LSP. */
export function applyTextEdits(
  text: string,
  edits: readonly TextEdit[],
): string {
  const located = edits.map((edit, index) => ({
    start: offsetAt(text, edit.range.start),
    end: offsetAt(text, edit.range.end),
    newText: edit.newText,
    index,
  }));
  located.sort(
    (a, b) => a.start - b.start || a.end - b.end || a.index - b.index,
  );
  for (let i = 1; i < located.length; i += 1) {
    if (located[i].start < located[i - 1].end) {
      throw new ProposalError("the proposal's edits overlap");
    }
  }
  let result = "";
  let cursor = 0;
  for (const edit of located) {
    result += text.slice(cursor, edit.start) + edit.newText;
    cursor = edit.end;
  }
  return result + text.slice(cursor);
}

/** The whole proposed file: the base text (empty for a new file) with the edits applied. */
export function proposedText(proposal: EditProposal, baseText: string): string {
  return applyTextEdits(proposal.createsFile ? "" : baseText, proposal.edits);
}

export function proposalSubject(params: ConfirmParams): string {
  const preview = params.preview;
  if (preview?.kind === "edit") {
    return `${params.tool} ${preview.path}`;
  }
  if (preview?.kind === "command") {
    return `${params.tool} ${preview.argv.join(" ")}`;
  }
  return params.tool;
}

/** Title of the approval diff: tool, path and call id. */
export function diffTitle(params: ConfirmParams, preview: EditPreview): string {
  const side = preview.baseSha256 === null ? "new file" : "current";
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

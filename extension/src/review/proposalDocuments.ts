// The two sides of an approval diff. The left is the base the model read, read-only
// (`counterfoil-base:`); the right is the proposed file, a writable in-memory file system
// (`counterfoil-proposal:`) so the person can edit it before Accept. Neither touches the disk.

import * as vscode from "vscode";

export const PROPOSAL_SCHEME = "counterfoil-proposal";
export const BASE_SCHEME = "counterfoil-base";

/** A diff side's URI: keeps the file name (for highlighting) and the call id. */
export function sideUri(
  scheme: string,
  path: string,
  toolCallId: string,
  revision = 0,
): vscode.Uri {
  // A call proposed again (its file changed meanwhile) gets a fresh side, so closing the old
  // diff cannot touch the new one.
  const again = revision > 0 ? `&rev=${revision}` : "";
  return vscode.Uri.from({
    scheme,
    path: `/${path.replace(/^\/+/, "")}`,
    query: `call=${encodeURIComponent(toolCallId)}${again}`,
  });
}

/** Read-only texts: the bases. */
export class BaseDocuments
  implements vscode.TextDocumentContentProvider, vscode.Disposable
{
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  delete(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Writable in-memory files: the proposed sides. Saving one keeps its text here, never on disk. */
export class ProposedFiles
  implements vscode.FileSystemProvider, vscode.Disposable
{
  private readonly files = new Map<
    string,
    { data: Uint8Array; mtime: number }
  >();
  private readonly changed = new vscode.EventEmitter<
    vscode.FileChangeEvent[]
  >();
  readonly onDidChangeFile = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    const exists = this.files.has(uri.toString());
    this.files.set(uri.toString(), {
      data: new TextEncoder().encode(text),
      mtime: Date.now(),
    });
    this.changed.fire([
      {
        type: exists
          ? vscode.FileChangeType.Changed
          : vscode.FileChangeType.Created,
        uri,
      },
    ]);
  }

  /** The saved text (the open document may hold newer, unsaved text). */
  text(uri: vscode.Uri): string | undefined {
    const file = this.files.get(uri.toString());
    return file ? new TextDecoder().decode(file.data) : undefined;
  }

  delete(uri: vscode.Uri): void {
    this.files.delete(uri.toString());
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const file = this.files.get(uri.toString());
    if (!file) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return {
      type: vscode.FileType.File,
      ctime: file.mtime,
      mtime: file.mtime,
      size: file.data.byteLength,
    };
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("proposals hold files only");
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const file = this.files.get(uri.toString());
    if (!file) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return file.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.files.has(uri.toString())) {
      throw vscode.FileSystemError.NoPermissions(
        "only an open proposal can be edited",
      );
    }
    this.files.set(uri.toString(), { data: content, mtime: Date.now() });
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("proposals cannot be renamed");
  }

  dispose(): void {
    this.changed.dispose();
  }
}

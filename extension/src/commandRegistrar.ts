import * as vscode from "vscode";

/** What each part calls to register its commands: each registration joins `disposables`, so
 * the part that owns them disposes them together. */
export function commandRegistrar(
  disposables: vscode.Disposable[],
): (id: string, handler: (...args: unknown[]) => unknown) => void {
  return (id, handler) => {
    disposables.push(vscode.commands.registerCommand(id, handler));
  };
}

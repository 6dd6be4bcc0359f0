// A change set's approval (a command's revert, or a reviewed command's changes): one multi-file
// diff, one diff per file of what is there now against what Accept puts there, both sides
// read-only (the daemon applies the set all or nothing, each file checked by digest), and a
// notification with exactly Accept and Reject beside the run panel's. Anything but Accept is No.

import * as vscode from "vscode";
import type {
  ChangeSetPreview,
  ConfirmParams,
  ConfirmResult,
} from "../daemon/protocol";
import type { PendingApprovals } from "./pending";
import { changeSetQuestion, changeSetTitle, changeSideText } from "./proposal";
import { lateNotice } from "./lateAnswer";
import { BaseDocuments } from "./proposalDocuments";

export const CHANGES_SCHEME = "counterfoil-changes";
/** Whether a change set waits: its multi-file diff's title bar then has Accept and Reject. */
const CHANGE_SET_CONTEXT = "counterfoil.changeSetPending";

type Resource = [vscode.Uri, vscode.Uri, vscode.Uri];

function sideOf(path: string, toolCallId: string, side: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: CHANGES_SCHEME,
    path: `/${path.replace(/^\/+/, "")}`,
    query: `call=${encodeURIComponent(toolCallId)}&side=${side}`,
  });
}

/** Closes the answered set's diff (the multi-file diff's tab is known by its title alone). */
async function closeTabs(title: string): Promise<void> {
  const open = vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.label.startsWith(title));
  if (open.length > 0) {
    await vscode.window.tabGroups.close(open);
  }
}

export class ChangeSetReview implements vscode.Disposable {
  private readonly documents = new BaseDocuments();
  private readonly registration: vscode.Disposable;
  private readonly shown = new Map<string, () => Promise<boolean>>();
  /** Each waiting set's diff title, by call id: how its multi-file diff's tab is known. */
  private readonly titles = new Map<string, string>();

  constructor(
    private readonly pending: PendingApprovals,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(
      CHANGES_SCHEME,
      this.documents,
    );
  }

  async confirm(
    params: ConfirmParams,
    preview: ChangeSetPreview,
    token: vscode.CancellationToken,
  ): Promise<ConfirmResult> {
    const { answer, approval } = this.pending.waitForAnswer(
      params,
      token,
      "changes",
    );
    const resources: Resource[] = preview.files.map((file) => {
      const now = sideOf(file.path, params.toolCallId, "now");
      const after = sideOf(file.path, params.toolCallId, "after");
      this.documents.set(now, changeSideText(file, "now"));
      this.documents.set(after, changeSideText(file, "after"));
      return [vscode.Uri.parse(file.uri), now, after];
    });
    const title = changeSetTitle(params, preview);
    const show = () => this.open(title, resources);
    this.shown.set(params.toolCallId, show);
    this.titles.set(params.toolCallId, title);
    this.updateContext();
    void answer.finally(async () => {
      this.shown.delete(params.toolCallId);
      this.titles.delete(params.toolCallId);
      this.updateContext();
      await closeTabs(title);
      for (const [, now, after] of resources) {
        this.documents.delete(now);
        this.documents.delete(after);
      }
    });
    if (resources.length > 0) {
      await show();
    }
    const accept: vscode.MessageItem = { title: "Accept" };
    const reject: vscode.MessageItem = { title: "Reject" };
    // Dismissing the notification leaves the approval pending (the run panel still answers it).
    void vscode.window
      .showInformationMessage(
        `Counterfoil: ${changeSetQuestion(params, preview)}`,
        accept,
        reject,
      )
      .then((choice) => {
        if (choice && !this.pending.isWaiting(approval)) {
          void vscode.window.showInformationMessage(
            lateNotice(choice.title, approval),
          );
        } else if (choice === accept) {
          approval.settle({ approved: true }, "accepted");
        } else if (choice === reject) {
          approval.settle({ approved: false }, "rejected");
        }
      });
    return answer;
  }

  /** The call id of the waiting set whose diff is the tab labelled `label`, if any. */
  callShownAs(label: string | undefined): string | undefined {
    if (label === undefined) {
      return undefined;
    }
    for (const [toolCallId, title] of this.titles) {
      if (label.startsWith(title)) {
        return toolCallId;
      }
    }
    return undefined;
  }

  private updateContext(): void {
    void vscode.commands.executeCommand(
      "setContext",
      CHANGE_SET_CONTEXT,
      this.titles.size > 0,
    );
  }

  /** Opens a pending change set's diff again; false when `toolCallId` has none. */
  async showDiff(toolCallId: string): Promise<boolean> {
    const show = this.shown.get(toolCallId);
    return show ? show() : false;
  }

  private async open(title: string, resources: Resource[]): Promise<boolean> {
    try {
      await vscode.commands.executeCommand("vscode.changes", title, resources);
      return true;
    } catch (error) {
      // An editor without the multi-file diff shows the first file's diff instead.
      this.log.warn(`${title}: no multi-file diff (${String(error)})`);
      const [, now, after] = resources[0];
      await vscode.commands.executeCommand("vscode.diff", now, after, title, {
        preview: false,
      });
      return true;
    }
  }

  dispose(): void {
    this.registration.dispose();
    this.documents.dispose();
  }
}

// The run panel's Branches section, host side: lists a forked run's branches
// (`counterfoil/branches`) side by side in the panel, opens a branch's diff against the real root,
// and keeps one (`counterfoil/selectBranch`: its changes come as ordinary review proposals, each
// Accepted or Rejected). Also the command "Counterfoil: Show Branches". It renders and forwards:
// the daemon decides what a selection may do.

import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { type DaemonClient, errorMessage } from "../daemon/client";
import {
  type BranchesResult,
  type BranchInfo,
  Methods,
  type SelectBranchResult,
} from "../daemon/protocol";
import type { BranchesMessage, BranchPanelMessage } from "./branchMessages";
import {
  branchCard,
  diffPairs,
  type RunChoice,
  runChoices,
  selectionNote,
} from "./branchesView";

export const SHOW_BRANCHES = "counterfoil.showBranches";
/** A side with no file (one the branch added or removed) reads as empty. */
const EMPTY_SCHEME = "counterfoil-branch-empty";
/** A branch's copy of a file, read only: a line typed there would be kept with the branch
 * while its card still reports the checks it ran without it. */
const BRANCH_SCHEME = "counterfoil-branch";
/** Asks the sessions to offer again what the daemon says can be resumed now. */
export const REFRESH_RESUMABLE = "counterfoil.refreshResumable";

/** What the section needs from the panel: post to its webview and show it. */
export interface BranchesHost {
  post(message: BranchesMessage): void;
  reveal(): void;
}

export class BranchesSection implements vscode.Disposable {
  private runId: string | null = null;
  private branches: BranchInfo[] = [];
  private note: string | null = null;
  private keeping: string | null = null;
  /** The next render scrolls the section into view (Show Branches was asked). */
  private revealNext = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: DaemonClient,
    private readonly host: BranchesHost,
  ) {
    this.disposables.push(
      vscode.commands.registerCommand(SHOW_BRANCHES, (runId?: unknown) =>
        typeof runId === "string" ? this.show(runId) : this.chooseAndShow(),
      ),
      vscode.workspace.registerTextDocumentContentProvider(EMPTY_SCHEME, {
        provideTextDocumentContent: () => "",
      }),
      vscode.workspace.registerTextDocumentContentProvider(BRANCH_SCHEME, {
        provideTextDocumentContent: (uri) => this.branchFile(uri),
      }),
    );
  }

  /** A file of a listed branch's copy (nothing else is served). */
  private branchFile(uri: vscode.Uri): string {
    const file = path.resolve(uri.path);
    const inCopy = this.branches.some(
      (branch) =>
        branch.copyRoot !== null &&
        file.startsWith(path.resolve(branch.copyRoot) + path.sep),
    );
    if (!inCopy) {
      throw new Error(`${file} is not in a branch's copy`);
    }
    return readFileSync(file, "utf8");
  }

  /** Asks which run (the runs this daemon and the receipt log know, or one typed) and shows it. */
  async chooseAndShow(): Promise<void> {
    let known: RunChoice[] = [];
    try {
      known = runChoices(
        await this.client.request(Methods.receipts, {}),
        new Date(),
      );
    } catch (error) {
      void vscode.window.showWarningMessage(
        `Counterfoil could not read the runs: ${errorMessage(error)}`,
      );
    }
    const runId = await pickRunId(known);
    if (runId) await this.show(runId);
  }

  /** Lists `runId`'s branches in the panel. */
  async show(runId: string): Promise<BranchesResult | undefined> {
    this.runId = runId;
    this.note = null;
    this.host.reveal(); // shown first, so the section can scroll into a visible view
    this.revealNext = true;
    return this.refresh();
  }

  /** The section as it stands, sent again (the webview asks when it loads). */
  render(): void {
    this.host.post({
      type: "branches",
      runId: this.runId,
      cards: this.branches.map(branchCard),
      note: this.note,
      keeping: this.keeping,
      reveal: this.revealNext,
    });
    this.revealNext = false;
  }

  async onMessage(message: BranchPanelMessage): Promise<void> {
    switch (message.type) {
      case "showBranchDiff":
        await this.showDiff(message.branch);
        return;
      case "keepBranch":
        await this.keep(message.branch);
        return;
      case "closeBranches":
        this.runId = null;
        this.branches = [];
        this.note = null;
        this.render();
        return;
    }
  }

  /** Each file the branch changed, the real root's on the left and the branch's on the right. */
  async showDiff(name: string): Promise<void> {
    const branch = this.branches.find((item) => item.name === name);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const pairs = branch && root ? diffPairs(branch, root) : [];
    if (pairs.length === 0) {
      void vscode.window.showInformationMessage(
        `Counterfoil: ${name} has no changed files to compare.`,
      );
      return;
    }
    const side = (file: string, label: string): vscode.Uri =>
      existsSync(file)
        ? vscode.Uri.file(file)
        : vscode.Uri.from({ scheme: EMPTY_SCHEME, path: `/${label}` });
    const branchSide = (file: string, label: string): vscode.Uri =>
      existsSync(file)
        ? vscode.Uri.from({ scheme: BRANCH_SCHEME, path: file })
        : side(file, label);
    const [first] = pairs;
    if (pairs.length === 1 && first) {
      await vscode.commands.executeCommand(
        "vscode.diff",
        side(first.root, first.path),
        branchSide(first.branch, first.path),
        `${first.path} (root ↔ ${name}, read-only)`,
      );
      return;
    }
    await vscode.commands.executeCommand(
      "vscode.changes",
      `${name}: ${pairs.length} files against the root`,
      pairs.map((pair) => [
        vscode.Uri.file(pair.root),
        side(pair.root, pair.path),
        branchSide(pair.branch, pair.path),
      ]),
    );
  }

  /** Selects the branch: each change is a review proposal; then the listing is read again. */
  async keep(name: string): Promise<SelectBranchResult | undefined> {
    if (this.keeping) return undefined;
    const branch = this.branches.find((item) => item.name === name);
    if (branch?.keepAsks) {
      // It ends the run it came from or discards other branches: asked, as the daemon says.
      const choice = await vscode.window.showWarningMessage(
        `Keep ${name}?`,
        { modal: true, detail: branch.keepWould ?? undefined },
        "Keep",
      );
      if (choice !== "Keep") return undefined;
    }
    this.keeping = name;
    this.note = `Keeping ${name}: Accept or Reject each change it proposes.`;
    this.render();
    let result: SelectBranchResult | undefined;
    try {
      result = await this.client.request(Methods.selectBranch, {
        branch: name,
      });
      this.note = selectionNote(result);
      const show =
        result.outcome === "selected"
          ? vscode.window.showInformationMessage
          : vscode.window.showWarningMessage;
      void show(`Counterfoil: ${this.note}`);
    } catch (error) {
      this.note = `${name} was not kept: ${errorMessage(error)}.`;
      void vscode.window.showErrorMessage(`Counterfoil: ${this.note}`);
    } finally {
      this.keeping = null;
    }
    await this.refresh(this.note);
    void vscode.commands.executeCommand("counterfoil.refreshReceipts");
    // A kept branch ends the run it came from: the daemon no longer offers it to resume.
    void vscode.commands.executeCommand(REFRESH_RESUMABLE);
    return result;
  }

  private async refresh(
    note: string | null = null,
  ): Promise<BranchesResult | undefined> {
    if (!this.runId) return undefined;
    let result: BranchesResult | undefined;
    try {
      result = await this.client.request(Methods.branches, {
        runId: this.runId,
      });
      this.branches = result.branches;
      this.note =
        result.error ??
        note ??
        (result.branches.length === 0
          ? `${this.runId} has no branches: fork it with counterfoil fork.`
          : null);
    } catch (error) {
      this.branches = [];
      this.note = `Counterfoil could not list the branches: ${errorMessage(error)}`;
    }
    this.render();
    return result;
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }
}

/** A run from `known` (its goal, time and state shown, its id below), or an id the person types. */
async function pickRunId(known: RunChoice[]): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { runId: string };
  const pick = vscode.window.createQuickPick<Item>();
  pick.title = "Counterfoil: Show Branches";
  pick.placeholder =
    "The run whose branches to show (choose one, or type a goal or a run id)";
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  const knownItems: Item[] = known.map((run) => ({
    label: run.label,
    description: run.description,
    detail: run.runId,
    runId: run.runId,
  }));
  pick.items = knownItems;
  pick.onDidChangeValue((value) => {
    const typed = value.trim();
    pick.items =
      typed && !known.some((run) => run.runId === typed)
        ? [
            { label: typed, description: "a run id typed", runId: typed },
            ...knownItems,
          ]
        : knownItems;
  });
  return new Promise((resolve) => {
    pick.onDidAccept(() => {
      resolve(pick.selectedItems[0]?.runId);
      pick.hide();
    });
    pick.onDidHide(() => {
      resolve(undefined);
      pick.dispose();
    });
    pick.show();
  });
}

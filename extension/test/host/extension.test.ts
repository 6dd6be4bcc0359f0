// Extension-host tests: the real `vscode` API against the real daemon in a copy of the demo
// project. Each test sets up the script and state it needs, so any one can run alone.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as vscode from "vscode";
import type { CounterfoilApi } from "../../src/extension";
import type { RunResult } from "../../src/daemon/protocol";
import { PROPOSAL_SCHEME } from "../../src/review/controller";
import type { StepView } from "../../src/run/runModel";

const EXTENSION_ID = "counterfoil.counterfoil";
const COMMANDS = [
  "counterfoil.runAgent",
  "counterfoil.runValidation",
  "counterfoil.cancelRun",
  "counterfoil.pauseRun",
  "counterfoil.resumeRun",
  "counterfoil.verifyReceipts",
  "counterfoil.refreshReceipts",
  "counterfoil.openReceiptLog",
  "counterfoil.showTrace",
  "counterfoil.restartServer",
  "counterfoil.acceptProposal",
  "counterfoil.rejectProposal",
  "counterfoil.checkSetup",
  "counterfoil.selectInterpreter",
  "counterfoil.chooseModel",
  "counterfoil.allowForFolder",
  "counterfoil.allowFolderGrants",
  "counterfoil.openDemo",
  "counterfoil.rejectProposalWithReason",
  "counterfoil.chooseHunks",
  "counterfoil.followUp",
  "counterfoil.revertReceipt",
  "counterfoil.showObject",
  "counterfoil.showAppliedDiff",
  "counterfoil.installModelRuntime",
];

const scripts = mkdtempSync(join(tmpdir(), "counterfoil-host-scripts-"));
let api: CounterfoilApi;

function root(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, "a workspace folder is open");
  return folder.uri;
}

function workspaceFile(path: string): string {
  return join(root().fsPath, path);
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && (value as unknown) !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** Points the daemon at a new scripted model and waits until it reports that model. */
async function useScript(name: string, responses: object[]): Promise<void> {
  const file = join(scripts, `${name}.jsonl`);
  writeFileSync(
    file,
    responses.map((response) => JSON.stringify(response)).join("\n") + "\n",
  );
  const spec = `scripted:${file}`;
  // Written as Counterfoil's own commands write a folder's model: recorded as theirs first.
  await api.client.request("counterfoil/confirmFolderGrants", {
    grants: { model: spec },
    origin: "walkthrough",
  });
  await vscode.workspace
    .getConfiguration("counterfoil")
    .update("model", spec, vscode.ConfigurationTarget.Workspace);
  await waitFor(`the daemon to use ${spec}`, async () => {
    const status = await api.client.request("counterfoil/status", {});
    return status.model === spec ? status : undefined;
  });
}

/** Starts a run whose second step proposes an edit of app.py, and waits for its diff. */
async function runUntilProposal(
  name: string,
): Promise<{ run: Promise<RunResult | undefined>; before: string }> {
  await useScript(name, [
    { tool: "read_file", path: "app.py" },
    bumpFactor().action,
    { final: "done" },
  ]);
  const before = readFileSync(workspaceFile("app.py"), "utf8");
  const run = api.commands.runAgent(name);
  await waitFor("the proposal diff", proposalDiffTab);
  return { run, before };
}

/** After an approval that was not Accept: the diff is gone, nothing waits, the file is as it was. */
async function assertAnsweredNo(before: string): Promise<void> {
  await waitFor("the diff to close", () => proposalDiffTab() === undefined);
  assert.deepEqual(api.review.pendingIds, []);
  assert.equal(readFileSync(workspaceFile("app.py"), "utf8"), before);
}

/** The steps of a run as the panel shows them: they come by notification, keyed by run id. */
function stepsOf(result: RunResult): StepView[] {
  return (
    api.panel.model.turns.find((turn) => turn.runId === result.runId)?.steps ??
    []
  );
}

function editResult(result: RunResult): string {
  const edited = stepsOf(result).find((step) =>
    step.action.startsWith("edit_file"),
  );
  return edited?.observation ?? "";
}

function proposalDiffTab(): vscode.TabInputTextDiff | undefined {
  for (const tab of vscode.window.tabGroups.all.flatMap(
    (group) => group.tabs,
  )) {
    if (
      tab.input instanceof vscode.TabInputTextDiff &&
      tab.input.modified.scheme === PROPOSAL_SCHEME
    ) {
      return tab.input;
    }
  }
  return undefined;
}

async function closeAllEditors(): Promise<void> {
  await vscode.commands.executeCommand("workbench.action.closeAllEditors");
}

/** An edit_file action on app.py that bumps its factor, whatever earlier tests left there. */
function bumpFactor(): { action: object; expected: string } {
  const text = readFileSync(workspaceFile("app.py"), "utf8");
  const [old, factor] = /value \* (\d+)/.exec(text) ?? [];
  assert.ok(old && factor, text);
  const replacement = `value * ${Number(factor) + 1}`;
  return {
    action: { tool: "edit_file", path: "app.py", old, new: replacement },
    expected: text.replace(old, replacement),
  };
}

/** Runs a script that edits app.py and accepts the proposal; returns the run. */
async function acceptedEdit(name: string): Promise<RunResult> {
  await useScript(name, [
    { tool: "read_file", path: "app.py" },
    bumpFactor().action,
    { final: "changed app.py" },
  ]);
  const run = api.commands.runAgent(name);
  const diff = await waitFor("the proposal diff", proposalDiffTab);
  await vscode.commands.executeCommand(
    "counterfoil.acceptProposal",
    diff.modified,
  );
  const result = await run;
  assert.ok(result?.completed, JSON.stringify(result));
  return result;
}

suite("Counterfoil in the extension host", () => {
  suiteSetup(async () => {
    const extension =
      vscode.extensions.getExtension<CounterfoilApi>(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is installed`);
    api = await extension.activate();
    await api.client.start();
  });

  teardown(closeAllEditors);

  test("the extension activates and the daemon starts on the workspace root", async () => {
    const status = await api.client.request("counterfoil/status", {});
    assert.equal(status.root, root().fsPath);
    assert.equal(status.allowWrites, true);
    assert.ok(
      status.availableTools.includes("edit_file"),
      JSON.stringify(status.availableTools),
    );
    assert.equal(status.running, false);
  });

  test("Check Setup runs counterfoil doctor with the daemon's interpreter and shows its report", async () => {
    const report = await api.setup.checkSetup();
    assert.match(report, /^ok {2}python: 3\.\d+/m);
    assert.match(report, /^ok {2}pygls: /m);
    assert.match(report, /^ok {2}receipt log: /m);
  });

  test("every command is registered", async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const command of COMMANDS) {
      assert.ok(registered.has(command), command);
    }
  });

  test("a confirm for an edit opens a diff of the file against the read-only proposal; Accept writes it", async () => {
    const { action, expected } = bumpFactor();
    await useScript("edit", [
      { tool: "read_file", path: "app.py" },
      action,
      { final: "changed app.py" },
    ]);
    const before = readFileSync(workspaceFile("app.py"), "utf8");
    const run = api.commands.runAgent("fix app.py");
    const diff = await waitFor("the proposal diff", proposalDiffTab);
    assert.equal(
      diff.original.scheme,
      "counterfoil-base",
      "the left side is the base the model read, not the live file",
    );
    assert.equal(
      (await vscode.workspace.openTextDocument(diff.original)).getText(),
      before,
    );
    const proposal = await vscode.workspace.openTextDocument(diff.modified);
    assert.equal(proposal.getText(), expected);
    assert.equal(
      readFileSync(workspaceFile("app.py"), "utf8"),
      before,
      "nothing is written before Accept",
    );
    assert.equal(api.review.pendingIds.length, 1);
    await vscode.commands.executeCommand(
      "counterfoil.acceptProposal",
      diff.modified,
    );
    const result: RunResult | undefined = await run;
    assert.ok(result, "the run returned a result");
    assert.equal(result.completed, true, JSON.stringify(result));
    assert.deepEqual(result.modifiedFiles, ["app.py"]);
    assert.equal(readFileSync(workspaceFile("app.py"), "utf8"), expected);
    assert.equal(
      proposalDiffTab(),
      undefined,
      "the diff closes after the answer",
    );
    const shown = await waitFor("the editor to show the written file", () => {
      const editor = vscode.window.activeTextEditor;
      return editor?.document.uri.fsPath === workspaceFile("app.py") &&
        editor.document.getText() === expected
        ? editor
        : undefined;
    });
    assert.ok(shown);
  });

  test("the receipts tree lists the receipt with its children, and the log verifies", async () => {
    await acceptedEdit("tree");
    const node = await waitFor("the edit's receipt in the tree", () =>
      api.receipts
        .receiptNodes()
        .reverse()
        .find((candidate) => / · edit_file app\.py$/.test(candidate.label)),
    );
    const item = api.receipts.getTreeItem(node);
    assert.equal(item.description, "ok");
    assert.ok(item.command, "clicking an edit receipt does something");
    assert.equal(
      api.receipts.getChildren()[0].contextValue,
      "run",
      "receipts are grouped by run",
    );
    assert.deepEqual(
      api.receipts.getChildren(node).map((child) => child.label),
      ["approved by", "arguments", "result", "artifacts", "receipt id"],
    );
    const verified = await api.receiptCommands.verifyReceipts();
    assert.equal(verified?.ok, true, JSON.stringify(verified));
    assert.equal(verified?.count, api.receipts.shown.length);
  });

  test("a refresh of the receipts is one change of the tree (a second within 200 ms redraws it under a person's click)", async () => {
    let changes = 0;
    const counting = api.receipts.onDidChangeTreeData(() => {
      changes += 1;
    });
    try {
      assert.ok(await api.receiptCommands.refreshReceipts());
    } finally {
      counting.dispose();
    }
    assert.equal(changes, 1);
  });

  test("a Revert that reaches no receipt (its row mid-redraw) reverts nothing and asks for no approval", async () => {
    const loaded = await api.receiptCommands.refreshReceipts();
    assert.ok(loaded?.logPath, "the daemon keeps a log file");
    const before = readFileSync(loaded.logPath, "utf8");
    const reverted: unknown = await vscode.commands.executeCommand(
      "counterfoil.revertReceipt",
    );
    assert.equal(reverted, undefined);
    assert.equal(api.review.pendingIds.length, 0, "no proposal opened");
    assert.equal(readFileSync(loaded.logPath, "utf8"), before);
  });

  test("closing the proposal diff answers No and nothing is written", async () => {
    await useScript("new-file", [
      { tool: "write_file", path: "notes.txt", content: "hello\n" },
      { final: "done" },
    ]);
    const run = api.commands.runAgent("write notes");
    const diff = await waitFor(
      "the proposal diff for a new file",
      proposalDiffTab,
    );
    assert.equal(
      (await vscode.workspace.openTextDocument(diff.original)).getText(),
      "",
      "a new file is compared with an empty document",
    );
    assert.equal(
      (await vscode.workspace.openTextDocument(diff.modified)).getText(),
      "hello\n",
    );
    await closeAllEditors();
    const result = await run;
    assert.ok(result);
    assert.equal(existsSync(workspaceFile("notes.txt")), false);
    const denied = stepsOf(result).find((step) => step.toolCallId);
    assert.match(denied?.observation ?? "", /denied/);
  });

  test("Accept with the target's unsaved changes writes nothing and keeps the proposal pending until they are reverted", async () => {
    const { action, expected } = bumpFactor();
    await useScript("dirty", [
      { tool: "read_file", path: "app.py" },
      action,
      { final: "done" },
    ]);
    const document = await vscode.workspace.openTextDocument(
      vscode.Uri.joinPath(root(), "app.py"),
    );
    const onDisk = readFileSync(workspaceFile("app.py"), "utf8");
    const run = api.commands.runAgent("rename");
    const diff = await waitFor("the proposal diff", proposalDiffTab);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(document.uri, new vscode.Position(0, 0), "# unsaved\n");
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(document.isDirty);
    assert.equal(await api.review.accept(diff.modified), false);
    assert.equal(readFileSync(workspaceFile("app.py"), "utf8"), onDisk);
    assert.equal(api.review.pendingIds.length, 1, "still pending");
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand("workbench.action.files.revert");
    assert.equal(document.isDirty, false);
    assert.equal(await api.review.accept(diff.modified), true);
    const result = await run;
    assert.ok(result);
    assert.equal(readFileSync(workspaceFile("app.py"), "utf8"), expected);
  });

  test("a file changed on disk while its proposal is pending stays pending, no longer applying: Accept refused, Reject answers", async () => {
    const { action } = bumpFactor();
    await useScript("stale", [
      { tool: "read_file", path: "app.py" },
      action,
      { final: "done" },
    ]);
    const run = api.commands.runAgent("stale");
    await waitFor("the proposal diff", proposalDiffTab);
    const changed = `${readFileSync(workspaceFile("app.py"), "utf8")}# saved elsewhere\n`;
    writeFileSync(workspaceFile("app.py"), changed);
    await waitFor("the proposal to say it no longer applies", () =>
      Object.values(api.panel.model.proposals).some(
        (proposal) =>
          proposal.state === "pending" &&
          (proposal.reason ?? "").startsWith("no longer applies"),
      ),
    );
    assert.equal(await api.review.accept(), false, "Accept writes nothing");
    assert.equal(api.review.reject(undefined, "it changed"), true);
    const result = await run;
    assert.ok(result);
    assert.match(editResult(result), /denied/);
    assert.equal(readFileSync(workspaceFile("app.py"), "utf8"), changed);
    await closeAllEditors();
  });

  test("dropping a hunk and editing the proposed side send the final text with the answer", async () => {
    const answers: Array<Record<string, unknown>> = [];
    const base = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n";
    const proposed = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n";
    writeFileSync(workspaceFile("hunks.txt"), base);
    const digest = (text: string) =>
      createHash("sha256").update(text).digest("hex");
    const source = new vscode.CancellationTokenSource();
    const answer = api.review.confirm(
      {
        toolCallId: "call-h",
        tool: "write_file",
        arguments: { path: "hunks.txt" },
        preview: {
          kind: "edit",
          path: "hunks.txt",
          uri: vscode.Uri.file(workspaceFile("hunks.txt")).toString(),
          removesFile: false,
          baseSha256: digest(base),
          proposedSha256: digest(proposed),
          proposedText: proposed,
          baseText: base,
          edit: null,
        },
      },
      source.token,
    );
    const diff = await waitFor("the proposal diff", proposalDiffTab);
    assert.equal(api.panel.model.proposals["call-h"].hunks?.length, 2);
    const right = await vscode.workspace.openTextDocument(diff.modified);
    await waitFor("the proposed side", () =>
      right.getText() === proposed ? true : undefined,
    );
    await api.review.chooseHunks("call-h", [true, false]);
    assert.equal(right.getText(), "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n");
    const typed = new vscode.WorkspaceEdit();
    typed.insert(right.uri, new vscode.Position(1, 0), "# kept by hand\n");
    assert.ok(await vscode.workspace.applyEdit(typed));
    await api.review.accept("call-h");
    answers.push({ ...(await answer) });
    assert.deepEqual(answers, [
      {
        approved: true,
        text: "a = 10\n# kept by hand\nb = 2\nc = 3\nd = 4\ne = 5\n",
      },
    ]);
    assert.equal(
      readFileSync(workspaceFile("hunks.txt"), "utf8"),
      base,
      "the review itself writes nothing: the daemon does",
    );
  });

  test("Reject with a reason sends the reason with the No", async () => {
    const source = new vscode.CancellationTokenSource();
    const answer = api.review.confirm(
      {
        toolCallId: "call-r",
        tool: "run_command",
        arguments: { argv: ["python", "validate.py"] },
        preview: {
          kind: "command",
          argv: ["python", "validate.py"],
          cwd: root().fsPath,
          timeoutSeconds: 30,
        },
      },
      source.token,
    );
    await waitFor("the pending proposal", () =>
      api.review.pendingIds.includes("call-r") ? true : undefined,
    );
    await api.panel.onMessage({
      type: "reject",
      id: "call-r",
      reason: "run the tests instead",
    });
    assert.deepEqual(await answer, {
      approved: false,
      reason: "run the tests instead",
    });
    assert.equal(api.panel.model.proposals["call-r"].state, "rejected");
  });

  test("Stop Run while a proposal is open ends the run as cancelled and answers No", async () => {
    const { run, before } = await runUntilProposal("cancel");
    await vscode.commands.executeCommand("counterfoil.cancelRun");
    const result = await run;
    assert.equal(result?.reason, "cancelled", JSON.stringify(result));
    await assertAnsweredNo(before);
  });

  test("Restart Server while a proposal is open leaves it unanswered, closes its diff and brings the daemon back", async () => {
    const { run, before } = await runUntilProposal("restart");
    await vscode.commands.executeCommand("counterfoil.restartServer");
    await run;
    await assertAnsweredNo(before);
    const status = await api.client.request("counterfoil/status", {});
    assert.equal(status.running, false);
    assert.equal(status.root, root().fsPath);
  });

  test("an unanswered proposal times out as No and its diff closes", async () => {
    const config = vscode.workspace.getConfiguration("counterfoil");
    await config.update(
      "confirmTimeoutSeconds",
      1,
      vscode.ConfigurationTarget.Workspace,
    );
    try {
      const started = Date.now();
      const { run, before } = await runUntilProposal("timeout");
      const result = await run;
      assert.ok(result);
      assert.ok(
        Date.now() - started < 15_000,
        "the timeout is the configured one",
      );
      assert.match(editResult(result), /denied/);
      await assertAnsweredNo(before);
    } finally {
      await config.update(
        "confirmTimeoutSeconds",
        undefined,
        vscode.ConfigurationTarget.Workspace,
      );
    }
  });

  test("a broken receipt log shows as a warning node with the reason", async () => {
    await acceptedEdit("before-breaking");
    const loaded = await api.receiptCommands.refreshReceipts();
    assert.ok(loaded?.logPath, "the daemon keeps a log file");
    const logPath = loaded.logPath;
    const intact = readFileSync(logPath, "utf8");
    assert.ok(intact.includes("edited app.py"));
    writeFileSync(logPath, intact.replace("edited app.py", "edited app.pz"));
    try {
      const verified = await api.receiptCommands.verifyReceipts();
      assert.equal(verified?.ok, false);
      const roots = api.receipts.getChildren();
      const problem = roots[roots.length - 1];
      assert.equal(problem.contextValue, "logProblem");
      assert.match(problem.description ?? "", /line 1/);
      assert.match(problem.description ?? "", /chain is broken/);
      assert.equal(
        api.receipts.getTreeItem(problem).iconPath instanceof vscode.ThemeIcon,
        true,
      );
    } finally {
      writeFileSync(logPath, intact);
    }
    assert.equal((await api.receiptCommands.verifyReceipts())?.ok, true);
    assert.ok(
      api.receipts
        .getChildren()
        .every((node) => node.contextValue !== "logProblem"),
    );
  });

  test("Run Validation goes through approval and returns the status and its receipt", async () => {
    // Last: the command modal stays on screen after this programmatic answer.
    const app = workspaceFile("app.py");
    writeFileSync(
      app,
      readFileSync(app, "utf8").replace(/value \* \d+/, "value * 2"),
    );
    const validation = api.commands.runValidation([
      "python",
      "-m",
      "pytest",
      "tests/test_math.py",
      "-q",
    ]);
    const [callId] = await waitFor("the command approval", () =>
      api.review.pendingIds.length > 0 ? api.review.pendingIds : undefined,
    );
    assert.ok(await api.review.accept(callId));
    const result = await validation;
    assert.ok(result, "the validation returned");
    assert.match(result.observation, /^status: 0$/m);
    assert.equal(result.state, "approved");
    assert.equal(result.effect?.exitStatus, 0);
    assert.equal(result.receipt?.tool, "run_command");
    assert.equal(result.receipt?.exit_state, "ok");
    await waitFor(
      "the receipt in the tree",
      () =>
        api.receipts
          .receiptNodes()
          .some((node) => node.label.startsWith(`${callId} · run_command`)) ||
        undefined,
    );
  });
});

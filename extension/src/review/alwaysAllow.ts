// "Always Allow" on a command's question: the person's exact-argv `allow` rule, appended after
// their own rules in their user settings (`counterfoil.approvalRules`, never a folder's, which
// may not allow). The daemon decides what the rule allows and when (it reads the rules a run
// starts with); this only writes the setting the person chose.

import * as vscode from "vscode";
import { argvText } from "../argvText";
import { withExactRule } from "./exactRule";

export const ALWAYS_ALLOW = "Always Allow";
const SECTION = "counterfoil";
const KEY = "approvalRules";

/** Writes `argv`'s rule to the person's user settings and says what was done (or why not). */
export async function alwaysAllow(argv: readonly string[]): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const written = withExactRule(config.inspect(KEY)?.globalValue, argv);
  if ("problem" in written) {
    void vscode.window.showErrorMessage(
      `Counterfoil: no rule written: ${written.problem}.`,
    );
    return;
  }
  const command = argvText([...argv]);
  if (written.added) {
    await config.update(KEY, written.rules, vscode.ConfigurationTarget.Global);
  }
  const show = "Show in Settings";
  const said = written.added
    ? `Counterfoil: your approval rules (user settings) now allow the command ${command}, from the next run on. A command that would run unconfined (commandSandbox off) is still asked.`
    : `Counterfoil: your approval rules already allow the command ${command}.`;
  const choice = await vscode.window.showInformationMessage(said, show);
  if (choice === show) {
    await vscode.commands.executeCommand(
      "workbench.action.openSettings",
      `${SECTION}.${KEY}`,
    );
  }
}

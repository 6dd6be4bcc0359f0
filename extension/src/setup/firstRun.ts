// Whether an activation opens the first-run walkthrough. Pure, unit-tested; walkthrough.ts opens
// it. VS Code opens an extension's walkthrough on its own only for some installs (not a .vsix
// installed from the command line), so the extension's first activation does.

/** The walkthrough's id as VS Code names it: publisher.name#id (package.json). */
export const WALKTHROUGH_ID = "counterfoil.counterfoil#setup";
/** The global-state key that records that it was opened once. */
export const WALKTHROUGH_SHOWN = "counterfoil.walkthroughShown";

/** Where `counterfoil.model` is set, as `WorkspaceConfiguration.inspect` reports it. */
export interface SettingScopes {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** What decides whether this activation opens the walkthrough. */
export interface FirstRun {
  /** It was opened before (the extension's global state). */
  shownBefore: boolean;
  /** Where `counterfoil.model` is set. */
  model: SettingScopes | undefined;
  /** The extension runs under the test runner. */
  underTest: boolean;
}

/**
 * Once per install, at the first activation, unless a model was already chosen (the person, or
 * a project set up for Counterfoil, is past the first steps) or the test runner runs the
 * extension.
 */
export function opensWalkthrough(first: FirstRun): boolean {
  const model = first.model;
  const chosen =
    model !== undefined &&
    (model.globalValue !== undefined ||
      model.workspaceValue !== undefined ||
      model.workspaceFolderValue !== undefined);
  return !first.shownBefore && !chosen && !first.underTest;
}

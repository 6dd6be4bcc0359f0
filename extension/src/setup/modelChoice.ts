// What the person is told once a model is chosen: which model, where it was set, and what
// happens next, so a choice is never silent. Pure, unit-tested.

export type ModelScope = "folder" | "user";

/** The confirmation after `counterfoil.model` was written. */
export function modelChosenNotice(
  model: string,
  scope: ModelScope,
  folderName?: string,
): string {
  const shown = model.startsWith("scripted:")
    ? "the scripted demo (recorded responses, no model)"
    : `"${model}"`;
  if (!model.trim()) {
    return scope === "folder"
      ? `Counterfoil: no model is set for ${folderName ?? "this folder"} now.`
      : "Counterfoil: no model is set in your user settings now.";
  }
  const where =
    scope === "folder"
      ? `for ${folderName ?? "this folder"} (workspace settings)`
      : "in your user settings";
  const next = model.startsWith("scripted:")
    ? "The next run replays it."
    : "The next run loads it; a model not on disk is downloaded first.";
  return `Counterfoil: model set to ${shown} ${where}. ${next}`;
}

/** Why a model could not be set, in one sentence. */
export function modelNotSetNotice(model: string, why: string): string {
  return `Counterfoil: the model was not set to "${model}": ${why}`;
}

/**
 * Why a local model path cannot be used, at once (undefined: it exists, or it is a name or a
 * repo id the daemon checks). A path is never "downloaded on the first run".
 */
export function missingModelPath(
  model: string,
  exists: (path: string) => boolean,
  home: string,
): string | undefined {
  const text = model.trim();
  const path = text.startsWith("~") ? home + text.slice(1) : text;
  const isPath = /^[./~]/.test(text) || text.toLowerCase().endsWith(".gguf");
  return isPath && !exists(path) ? `${path} does not exist` : undefined;
}

// What a folder's settings did, as the person reads it (the run panel, the question before a
// grant): the daemon's facts in words. Pure, unit-tested; the daemon decides, this only says.

import type {
  FolderSettingValue,
  FolderSettingsResult,
} from "../daemon/protocol";
import { argvText } from "../argvText";

const OUTCOME_WORDS: Record<FolderSettingValue["outcome"], string> = {
  applies: "applies",
  narrowed: "applies (stricter than yours)",
  ignored: "ignored (yours kept)",
  waiting: "waiting for your yes (yours kept)",
  granted: "applies (you allowed it)",
};

/** One line per folder value: key, value, where it was written, what became of it. */
export function folderSettingLines(result: FolderSettingsResult): string[] {
  return result.values.map((value) => {
    const outcome =
      value.outcome === "granted" && value.origin === "walkthrough"
        ? "applies (written by Counterfoil's walkthrough)"
        : OUTCOME_WORDS[value.outcome];
    const why = value.problem ?? value.rule;
    return `${value.key} = ${JSON.stringify(value.value)} (${value.source} settings): ${outcome}; ${why}`;
  });
}

/** One line per value of the person's own that its check refused, and what is used instead:
 * "maxSteps must be an integer from 1 to 10000; using 8 (the default)". */
export function refusedSettingLines(result: FolderSettingsResult): string[] {
  return result.refused.map((item) => {
    const gap = item.problem.startsWith("[") ? "" : " ";
    const kept =
      item.fallback === "yours" ? "your last valid value" : "the default";
    return `${item.key}${gap}${item.problem}; using ${item.used} (${kept})`;
  });
}

/** The grants a folder asks for and has not been given: what is confirmed, as it was shown. */
export function waitingGrants(
  result: FolderSettingsResult,
): Record<string, unknown> {
  return Object.fromEntries(
    result.values
      .filter((value) => value.outcome === "waiting")
      .map((value) => [value.key, value.value]),
  );
}

/** "edits, the commands `make deploy` and the model `./model.gguf` (from this folder, …)", in
 * the person's words. */
export function grantsInWords(grants: Record<string, unknown>): string {
  const parts: string[] = [];
  if (grants.allowWrites === true) {
    parts.push("edits");
  }
  const commands = grants.allowedCommands;
  if (Array.isArray(commands) && commands.length > 0) {
    const shown = commands.map((argv) =>
      Array.isArray(argv) ? `\`${argvText(argv.map(String))}\`` : "",
    );
    parts.push(
      `${commands.length === 1 ? "the command" : "the commands"} ${shown.join(", ")}`,
    );
  }
  if (typeof grants.model === "string") {
    // What it names is decided when the run loads it: a model inside this folder, or else a
    // download of that name (a hub repository, Python files included).
    parts.push(
      `the model \`${grants.model}\` (from this folder, or else downloaded by that name)`,
    );
  }
  return parts.length <= 1
    ? (parts[0] ?? "nothing")
    : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

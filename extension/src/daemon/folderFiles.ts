// What a folder's own settings files say of the settings that are the person's alone
// (`machine` scope: `endpoint`, `apiKeyEnv`, `mcpServers`, `engine`, `serverCommand`, …).
// VS Code drops such a value of a folder without a word and `inspect()` never shows it, so the
// files are read here, and the values go to the daemon in their layer: it lists each as
// ignored, and "This folder's settings" lists every value the folder set. Nothing read here
// is ever used.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser/lib/esm/main.js";
import manifest from "../../package.json";

const PREFIX = "counterfoil.";

/** The settings VS Code takes from the person alone, keys without the prefix. */
export const MACHINE_SETTING_KEYS: readonly string[] = Object.entries(
  manifest.contributes.configuration.properties as Record<
    string,
    { scope?: string }
  >,
)
  .filter(
    ([key, property]) => key.startsWith(PREFIX) && property.scope === "machine",
  )
  .map(([key]) => key.slice(PREFIX.length));

/** The person's-alone values a settings object holds (a settings.json, or a workspace file's
 * `settings`); anything that is not an object holds none. */
export function machineValues(settings: unknown): Record<string, unknown> {
  if (typeof settings !== "object" || settings === null) {
    return {};
  }
  const written = settings as Record<string, unknown>;
  return Object.fromEntries(
    MACHINE_SETTING_KEYS.filter(
      (key) => written[PREFIX + key] !== undefined,
    ).map((key) => [key, written[PREFIX + key]]),
  );
}

/** A JSON-with-comments file as VS Code reads it; undefined when it cannot be read. */
function readJsonc(path: string): unknown {
  try {
    return parse(readFileSync(path, "utf8"), [], { allowTrailingComma: true });
  } catch {
    return undefined;
  }
}

/** A URI's file on this machine (a vscode.Uri is one); undefined for another scheme. */
interface Location {
  scheme: string;
  fsPath: string;
}

const onDisk = (uri: Location | undefined): string | undefined =>
  uri?.scheme === "file" ? uri.fsPath : undefined;

/** The person's-alone values the folder's `.vscode/settings.json` and the workspace file
 * (`.code-workspace`, under `settings`) set, by VS Code's layer names. */
export function folderWrittenValues(
  folder: Location | undefined,
  workspaceFile: Location | undefined,
): { workspace: Record<string, unknown>; folder: Record<string, unknown> } {
  const workspacePath = onDisk(workspaceFile);
  const folderPath = onDisk(folder);
  const workspace = workspacePath ? readJsonc(workspacePath) : undefined;
  return {
    workspace: machineValues(
      (workspace as { settings?: unknown } | undefined)?.settings,
    ),
    folder: folderPath
      ? machineValues(readJsonc(join(folderPath, ".vscode", "settings.json")))
      : {},
  };
}

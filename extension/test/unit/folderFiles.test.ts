import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  folderWrittenValues,
  MACHINE_SETTING_KEYS,
} from "../../src/daemon/folderFiles";
import { readDaemonSettings } from "../../src/daemon/settings";

const file = (fsPath: string) => ({ scheme: "file", fsPath });

function folderWith(settingsText: string): string {
  const folder = mkdtempSync(join(tmpdir(), "folder-files-"));
  mkdirSync(join(folder, ".vscode"));
  writeFileSync(join(folder, ".vscode", "settings.json"), settingsText);
  return folder;
}

describe("a folder's values of the person's own settings", () => {
  test("the settings VS Code takes from the person alone are the manifest's machine ones", () => {
    for (const key of [
      "endpoint",
      "apiKeyEnv",
      "allowInsecureHttp",
      "mcpServers",
      "engine",
      "serverCommand",
      "pythonPath",
    ]) {
      assert.ok(MACHINE_SETTING_KEYS.includes(key), key);
    }
    assert.ok(!MACHINE_SETTING_KEYS.includes("maxSteps"));
  });

  test("are read from the folder's settings file, comments and trailing commas and all", () => {
    const folder = folderWith(
      '{\n  // the folder\'s\n  "counterfoil.endpoint": "http://127.0.0.1:9/v1",\n  "counterfoil.pythonPath": "/opt/py",\n  "counterfoil.maxSteps": 2,\n}\n',
    );

    assert.deepEqual(folderWrittenValues(file(folder), undefined), {
      workspace: {},
      folder: { endpoint: "http://127.0.0.1:9/v1", pythonPath: "/opt/py" },
    });
  });

  test("are read from a workspace file's settings", () => {
    const folder = mkdtempSync(join(tmpdir(), "folder-files-"));
    const workspaceFile = join(folder, "both.code-workspace");
    writeFileSync(
      workspaceFile,
      JSON.stringify({
        folders: [],
        settings: { "counterfoil.engine": "llama.cpp" },
      }),
    );

    assert.deepEqual(
      folderWrittenValues(undefined, file(workspaceFile)).workspace,
      { engine: "llama.cpp" },
    );
  });

  test("are none where the folder has no settings file or is not on this machine", () => {
    const folder = mkdtempSync(join(tmpdir(), "folder-files-"));

    assert.deepEqual(folderWrittenValues(file(folder), undefined).folder, {});
    assert.deepEqual(
      folderWrittenValues(
        { scheme: "vscode-remote", fsPath: folder },
        undefined,
      ).folder,
      {},
    );
  });

  test("go to the daemon in their layer, beside what VS Code reports", () => {
    const sent = readDaemonSettings(
      { inspect: () => undefined },
      { workspace: {}, folder: { apiKeyEnv: "HOME" } },
    );

    assert.deepEqual(sent.layers, {
      user: {},
      workspace: {},
      folder: { apiKeyEnv: "HOME" },
    });
  });
});

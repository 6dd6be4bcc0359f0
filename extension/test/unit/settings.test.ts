import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  DAEMON_SETTING_KEYS,
  EDITOR_SETTING_KEYS,
  machineValue,
  readDaemonSettings,
} from "../../src/daemon/settings";
import manifest from "../../package.json";

function source(
  user: Record<string, unknown>,
  folder: Record<string, unknown> = {},
  workspace: Record<string, unknown> = {},
) {
  return {
    inspect: <T>(key: string) => ({
      globalValue: user[key] as T | undefined,
      workspaceValue: workspace[key] as T | undefined,
      workspaceFolderValue: folder[key] as T | undefined,
    }),
  };
}

describe("daemon settings", () => {
  test("values go to the daemon as written, wrong ones included, for it to refuse", () => {
    const written = {
      model: "",
      allowWrites: "yes",
      allowedCommands: [["python"], "pytest"],
      maxSteps: -3,
      receiptLog: null,
    };
    assert.deepEqual(readDaemonSettings(source(written)).layers.user, written);
  });

  test("a key that is not set is left out, so the daemon's default applies", () => {
    assert.deepEqual(readDaemonSettings(source({ maxTokens: 64 })), {
      layers: { user: { maxTokens: 64 }, workspace: {}, folder: {} },
    });
  });

  test("each value goes to the daemon with where it was written", () => {
    const sent = readDaemonSettings(
      source(
        { commandSandbox: "review" },
        { commandSandbox: "off", endpoint: "http://127.0.0.1:9/v1" },
        { apiKeyEnv: "HOME" },
      ),
    );
    assert.deepEqual(sent.layers, {
      user: { commandSandbox: "review" },
      workspace: { apiKeyEnv: "HOME" },
      folder: { commandSandbox: "off", endpoint: "http://127.0.0.1:9/v1" },
    });
  });

  test("every key the daemon reads is contributed with a type, default and description", () => {
    const properties = manifest.contributes.configuration.properties as Record<
      string,
      Record<string, unknown>
    >;
    for (const key of [...DAEMON_SETTING_KEYS, "serverCommand", "pythonPath"]) {
      const property = properties[`counterfoil.${key}`];
      assert.ok(property, key);
      assert.ok(
        "type" in property &&
          "default" in property &&
          "markdownDescription" in property,
        key,
      );
    }
  });

  test("a setting that starts a program is never taken from a workspace or a folder", () => {
    assert.equal(
      machineValue({
        workspaceValue: ["./evil.sh"],
        workspaceFolderValue: ["./evil.sh"],
      }),
      undefined,
    );
    assert.deepEqual(
      machineValue({
        globalValue: ["python3", "-m", "counterfoil", "serve"],
        workspaceFolderValue: ["./evil.sh"],
      }),
      ["python3", "-m", "counterfoil", "serve"],
    );
  });

  test("the settings that start a program have the machine scope", () => {
    const properties = manifest.contributes.configuration.properties as Record<
      string,
      Record<string, unknown>
    >;
    for (const key of EDITOR_SETTING_KEYS) {
      assert.equal(properties[`counterfoil.${key}`].scope, "machine", key);
    }
  });
});

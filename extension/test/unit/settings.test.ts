import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  DAEMON_SETTING_KEYS,
  readDaemonSettings,
  resolveServerCommand,
} from "../../src/settings";
import manifest from "../../package.json";

function source(values: Record<string, unknown>) {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

describe("daemon settings", () => {
  test("defaults match the contributed defaults", () => {
    const properties = manifest.contributes.configuration.properties as Record<
      string,
      { default: unknown }
    >;
    const defaults = Object.fromEntries(
      DAEMON_SETTING_KEYS.map((key) => [
        key,
        properties[`counterfoil.${key}`].default,
      ]),
    );
    const settings = readDaemonSettings(source(defaults));
    for (const key of DAEMON_SETTING_KEYS) {
      if (key !== "receiptLog") {
        assert.deepEqual(settings[key], defaults[key], key);
      }
    }
    assert.equal("receiptLog" in settings, false);
  });

  test("every key the daemon reads is contributed with a type, default and description", () => {
    const properties = manifest.contributes.configuration.properties as Record<
      string,
      Record<string, unknown>
    >;
    for (const key of [...DAEMON_SETTING_KEYS, "serverCommand"]) {
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

  test("set values pass through without the prefix", () => {
    const settings = readDaemonSettings(
      source({
        model: "scripted:/tmp/fix-app.jsonl",
        allowWrites: true,
        allowedCommands: [["python", "-m", "pytest", "-q"]],
        receiptLog: ".counterfoil/receipts.jsonl",
        maxSteps: 4,
      }),
    );
    assert.equal(settings.model, "scripted:/tmp/fix-app.jsonl");
    assert.equal(settings.allowWrites, true);
    assert.deepEqual(settings.allowedCommands, [
      ["python", "-m", "pytest", "-q"],
    ]);
    assert.equal(settings.receiptLog, ".counterfoil/receipts.jsonl");
    assert.equal(settings.maxSteps, 4);
  });

  test("values of the wrong type fall back to defaults; malformed commands are dropped", () => {
    const settings = readDaemonSettings(
      source({
        allowWrites: "yes",
        maxSteps: 2.5,
        allowedCommands: [["ok"], "python -m pytest", [], ["", "x"], [1]],
      }),
    );
    assert.equal(settings.allowWrites, false);
    assert.equal(settings.maxSteps, 8);
    assert.deepEqual(settings.allowedCommands, [["ok"]]);
  });
});

describe("server command", () => {
  test("an explicit argv is used as it is", () => {
    assert.deepEqual(
      resolveServerCommand(
        ["/venv/bin/counterfoil", "serve"],
        "/usr/bin/python3",
      ),
      ["/venv/bin/counterfoil", "serve"],
    );
  });

  test("otherwise the configured Python runs the module", () => {
    assert.deepEqual(resolveServerCommand([], "/venv/bin/python"), [
      "/venv/bin/python",
      "-m",
      "counterfoil",
      "serve",
    ]);
  });

  test("without a configured Python, python3", () => {
    assert.deepEqual(resolveServerCommand(undefined, "python"), [
      "python3",
      "-m",
      "counterfoil",
      "serve",
    ]);
    assert.deepEqual(resolveServerCommand([], undefined), [
      "python3",
      "-m",
      "counterfoil",
      "serve",
    ]);
  });
});

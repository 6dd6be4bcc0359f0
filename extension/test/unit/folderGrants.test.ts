import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  folderSettingLines,
  grantsInWords,
  refusedSettingLines,
  waitingGrants,
} from "../../src/setup/folderGrants";
import type { FolderSettingsResult } from "../../src/daemon/protocol";

const told: FolderSettingsResult = {
  root: "/work/repo",
  values: [
    {
      key: "endpoint",
      source: "folder",
      value: "http://127.0.0.1:9/v1",
      outcome: "ignored",
      rule: "the person's alone",
    },
    {
      key: "allowWrites",
      source: "folder",
      value: true,
      outcome: "waiting",
      rule: "a grant the folder asks for: applies after your yes",
    },
    {
      key: "allowedCommands",
      source: "workspace",
      value: [["make", "deploy"]],
      outcome: "waiting",
      rule: "a grant the folder asks for: applies after your yes",
    },
  ],
  refused: [],
};

describe("folder settings in words", () => {
  test("each folder value says where it was written and what became of it", () => {
    assert.deepEqual(folderSettingLines(told), [
      'endpoint = "http://127.0.0.1:9/v1" (folder settings): ignored (yours kept); the person\'s alone',
      "allowWrites = true (folder settings): waiting for your yes (yours kept); a grant the folder asks for: applies after your yes",
      'allowedCommands = [["make","deploy"]] (workspace settings): waiting for your yes (yours kept); a grant the folder asks for: applies after your yes',
    ]);
  });

  test("only the waiting grants are asked for, as the daemon showed them", () => {
    assert.deepEqual(waitingGrants(told), {
      allowWrites: true,
      allowedCommands: [["make", "deploy"]],
    });
  });

  test("a request says what it would allow", () => {
    assert.equal(
      grantsInWords(waitingGrants(told)),
      "edits and the command `make deploy`",
    );
  });

  test("a model a folder asks for says it may be a download", () => {
    assert.equal(
      grantsInWords({ model: "models/coder" }),
      "the model `models/coder` (from this folder, or else downloaded by that name)",
    );
  });
});

describe("the person's refused settings in words", () => {
  test("each says the setting, what was wrong and what is used instead", () => {
    const refused: FolderSettingsResult = {
      root: null,
      values: [],
      refused: [
        {
          key: "maxSteps",
          problem: "must be an integer from 1 to 10000",
          used: "3",
          fallback: "yours",
        },
        {
          key: "allowedCommands",
          problem: "[0] must be a non-empty array",
          used: "[]",
          fallback: "default",
        },
      ],
    };

    assert.deepEqual(refusedSettingLines(refused), [
      "maxSteps must be an integer from 1 to 10000; using 3 (your last valid value)",
      "allowedCommands[0] must be a non-empty array; using [] (the default)",
    ]);
  });
});

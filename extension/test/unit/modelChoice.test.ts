import assert from "node:assert/strict";
import { test } from "node:test";
import {
  missingModelPath,
  modelChosenNotice,
  modelNotSetNotice,
} from "../../src/setup/modelChoice";

test("choosing a local model says which, where it was set and what the next run does", () => {
  assert.equal(
    modelChosenNotice("qwen3-4b", "user"),
    'Counterfoil: model set to "qwen3-4b" in your user settings. The next run loads it; a model not on disk is downloaded first.',
  );
});

test("choosing the scripted demo says it is set for the folder only", () => {
  assert.equal(
    modelChosenNotice("scripted:/ext/demo/fix-app.jsonl", "folder", "demo"),
    "Counterfoil: model set to the scripted demo (recorded responses, no model) for demo (workspace settings). The next run replays it.",
  );
});

test("an empty name says no model is set rather than naming nothing", () => {
  assert.equal(
    modelChosenNotice("", "user"),
    "Counterfoil: no model is set in your user settings now.",
  );
});

test("a setting that could not be written says so with the reason", () => {
  assert.equal(
    modelNotSetNotice("qwen3-4b", "the settings file is read-only"),
    'Counterfoil: the model was not set to "qwen3-4b": the settings file is read-only',
  );
});

test("a local model path that does not exist is refused at once", () => {
  const exists = (path: string) => path === "/models/qwen";
  assert.equal(
    missingModelPath("/models/missing.gguf", exists, "/home/me"),
    "/models/missing.gguf does not exist",
  );
  assert.equal(
    missingModelPath("~/models/x", exists, "/home/me"),
    "/home/me/models/x does not exist",
  );
  assert.equal(missingModelPath("/models/qwen", exists, "/home/me"), undefined);
  assert.equal(missingModelPath("qwen3-4b", exists, "/home/me"), undefined);
  assert.equal(
    missingModelPath("Qwen/Qwen3-4B-MLX-4bit", exists, "/home/me"),
    undefined,
  );
});

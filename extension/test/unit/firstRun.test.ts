import assert from "node:assert/strict";
import { test } from "node:test";
import { type FirstRun, opensWalkthrough } from "../../src/setup/firstRun";

const FIRST: FirstRun = {
  shownBefore: false,
  model: {},
  underTest: false,
};

test("the first activation after install opens the walkthrough", () => {
  assert.equal(opensWalkthrough(FIRST), true);
  assert.equal(opensWalkthrough({ ...FIRST, model: undefined }), true);
});

test("the walkthrough opens only once", () => {
  assert.equal(opensWalkthrough({ ...FIRST, shownBefore: true }), false);
});

test("a folder or a person with a model chosen is past the walkthrough", () => {
  for (const model of [
    { workspaceValue: "scripted:x" },
    { globalValue: "qwen3-4b" },
    { workspaceFolderValue: "scripted:x" },
  ]) {
    assert.equal(opensWalkthrough({ ...FIRST, model }), false);
  }
});

test("the test runner's activations never open it", () => {
  assert.equal(opensWalkthrough({ ...FIRST, underTest: true }), false);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { opensWalkthrough } from "../../src/setup/firstRun";

test("the first activation after install opens the walkthrough", () => {
  assert.equal(opensWalkthrough(false, {}, false), true);
  assert.equal(opensWalkthrough(false, undefined, false), true);
});

test("the walkthrough opens only once", () => {
  assert.equal(opensWalkthrough(true, {}, false), false);
});

test("a folder or a person with a model chosen is past the walkthrough", () => {
  assert.equal(
    opensWalkthrough(false, { workspaceValue: "scripted:x" }, false),
    false,
  );
  assert.equal(
    opensWalkthrough(false, { globalValue: "qwen3-4b" }, false),
    false,
  );
  assert.equal(
    opensWalkthrough(false, { workspaceFolderValue: "scripted:x" }, false),
    false,
  );
});

test("the test runner's activations never open it", () => {
  assert.equal(opensWalkthrough(false, {}, true), false);
});

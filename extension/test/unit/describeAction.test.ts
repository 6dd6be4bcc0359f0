import assert from "node:assert/strict";
import { test } from "node:test";
import { describeAction } from "../../src/runModel";

test("a search step names its pattern and where it searched", () => {
  assert.equal(
    describeAction({
      step: 1,
      response: "",
      action: {
        tool: "search_files",
        arguments: { pattern: "def double", path: "." },
      },
      result: "",
    }),
    'search_files "def double" in .',
  );
});

test("a step without an action says the daemon's reason, not a guess", () => {
  assert.equal(
    describeAction({
      step: 2,
      response: "{}",
      action: null,
      result: "error: tool is not enabled: write_file",
    }),
    "no action (tool is not enabled: write_file)",
  );
  assert.equal(
    describeAction({ step: 3, response: "hm", action: null, result: null }),
    "no action (the response did not parse)",
  );
});

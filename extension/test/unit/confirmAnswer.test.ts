import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { confirmAnswer } from "../../src/daemon/confirmAnswer";

describe("the answer the daemon is told", () => {
  test("the editor's cause of a No (the file went stale, the diff was closed) travels with it", () => {
    assert.deepEqual(
      confirmAnswer({ approved: false, reason: "changed", cause: "stale" }),
      { approved: false, reason: "changed", cause: "stale" },
    );
    assert.deepEqual(confirmAnswer({ approved: false, cause: "closed" }), {
      approved: false,
      cause: "closed",
    });
  });

  test("a Yes carries no cause, and only an explicit true approves", () => {
    assert.deepEqual(confirmAnswer({ approved: true, cause: "stale" }), {
      approved: true,
    });
    assert.deepEqual(
      confirmAnswer({ approved: "yes" as unknown as boolean, text: "x" }),
      { approved: false },
    );
  });
});

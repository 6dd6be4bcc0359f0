import assert from "node:assert/strict";
import { test } from "node:test";
import {
  canRepropose,
  occurrences,
  outdatedWords,
} from "../../src/review/outdatedProposal";

test("occurrences count overlaps, as the daemon does", () => {
  assert.equal(occurrences("aaa", "aa"), 2);
  assert.equal(occurrences("value * 1", "value * 1"), 1);
  assert.equal(occurrences("x", ""), 0);
});

test("an edit can be proposed again only while its old text occurs exactly once", () => {
  const args = { path: "app.py", old: "value * 1", new: "value * 2" };
  assert.equal(canRepropose("edit_file", args, "# mine\nvalue * 1\n"), true);
  assert.equal(canRepropose("edit_file", args, "value * 3\n"), false);
  assert.equal(
    canRepropose("edit_file", args, "value * 1\nvalue * 1\n"),
    false,
  );
  assert.equal(canRepropose("edit_file", args, null), false);
  assert.equal(canRepropose("write_file", { content: "x" }, "x"), false);
});

test("the words say the proposal is still pending and what each choice does", () => {
  const words = outdatedWords(
    "edit_file app.py",
    "call-1",
    "app.py changed on disk after the model read it.",
    true,
  );
  assert.match(words.message, /still pending but no longer applies/);
  assert.match(words.message, /Re-propose/);
  assert.equal(
    words.reason,
    "no longer applies: app.py changed on disk after the model read it.",
  );
});

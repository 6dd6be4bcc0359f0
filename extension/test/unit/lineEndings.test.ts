import assert from "node:assert/strict";
import { test } from "node:test";
import {
  lineEndingNote,
  restoreLineEndings,
} from "../../src/review/lineEndings";

const base = "a\r\nb\r\nc\r\n";
// The model's `new` text had a bare \n inside a CRLF file.
const proposed = "a\r\nB1\nB2\r\nc\r\n";
const normalised = proposed.replace(/\r?\n/g, "\r\n");

test("an untouched proposal comes back byte for byte from a normalising editor", () => {
  assert.equal(restoreLineEndings(proposed, normalised), proposed);
});

test("lines the person typed keep the editor's ending, the others their own", () => {
  const typed = normalised.replace("c\r\n", "c\r\nnew\r\n");
  assert.equal(
    restoreLineEndings(proposed, typed),
    "a\r\nB1\nB2\r\nc\r\nnew\r\n",
  );
});

test("a line the person changed is theirs, ending and all", () => {
  const typed = normalised.replace("B1", "B one");
  assert.equal(
    restoreLineEndings(proposed, typed),
    "a\r\nB one\r\nB2\r\nc\r\n",
  );
});

test("a final newline the person removed stays removed", () => {
  assert.equal(restoreLineEndings("a\nb\n", "a\nb"), "a\nb");
});

test("an LF line written into a CRLF file is said, with its line", () => {
  assert.equal(
    lineEndingNote(base, proposed),
    "1 changed line ends in LF in a CRLF file (line 2)",
  );
});

test("a change of endings alone is said although the text is the same", () => {
  assert.equal(
    lineEndingNote(base, "a\nb\nc\r\n"),
    "2 changed lines end in LF in a CRLF file (lines 1–2)",
  );
});

test("a proposal that keeps the file's endings says nothing", () => {
  assert.equal(lineEndingNote(base, "a\r\nx\r\nc\r\n"), undefined);
  assert.equal(lineEndingNote("", "new\nfile\n"), undefined);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  applyHunks,
  computeHunks,
  hunkLabel,
  splitLines,
} from "../../src/review/hunks";

const base = "a\nb\nc\nd\ne\nf\n";
const proposed = "a\nB\nc\nd\ne\nF\ng\n";

test("lines keep their ends so joining them gives the text back", () => {
  assert.deepEqual(splitLines("x\ny"), ["x\n", "y"]);
  assert.equal(splitLines(base).join(""), base);
  assert.deepEqual(splitLines(""), []);
});

test("two separate changes are two hunks at their base lines", () => {
  const hunks = computeHunks(base, proposed);
  assert.equal(hunks.length, 2);
  assert.deepEqual(hunks[0], {
    baseStart: 1,
    baseCount: 1,
    removed: ["b\n"],
    added: ["B\n"],
  });
  assert.deepEqual(hunks[1], {
    baseStart: 5,
    baseCount: 1,
    removed: ["f\n"],
    added: ["F\n", "g\n"],
  });
  assert.equal(hunkLabel(hunks[1]), "line 6: −1 +2");
});

test("keeping every hunk gives the proposal, dropping every hunk gives the base", () => {
  const hunks = computeHunks(base, proposed);
  assert.equal(applyHunks(base, hunks, [true, true]), proposed);
  assert.equal(applyHunks(base, hunks, [false, false]), base);
});

test("dropping one hunk of two keeps only the other change", () => {
  const hunks = computeHunks(base, proposed);
  assert.equal(applyHunks(base, hunks, [false, true]), "a\nb\nc\nd\ne\nF\ng\n");
  assert.equal(applyHunks(base, hunks, [true, false]), "a\nB\nc\nd\ne\nf\n");
});

test("a new file is one hunk of added lines; identical texts have none", () => {
  assert.deepEqual(computeHunks("", "x\ny\n"), [
    { baseStart: 0, baseCount: 0, removed: [], added: ["x\n", "y\n"] },
  ]);
  assert.deepEqual(computeHunks(base, base), []);
});

test("a change to the last line without a newline is kept byte for byte", () => {
  const hunks = computeHunks("x\ny", "x\nz");
  assert.equal(hunks.length, 1);
  assert.equal(applyHunks("x\ny", hunks, [true]), "x\nz");
  assert.equal(applyHunks("x\ny", hunks, [false]), "x\ny");
});

test("pure insertions and deletions between unchanged lines", () => {
  const from = "1\n2\n3\n4\n";
  const to = "1\n2\nnew\n3\n";
  const hunks = computeHunks(from, to);
  assert.equal(hunks.length, 2);
  assert.equal(applyHunks(from, hunks, [true, false]), "1\n2\nnew\n3\n4\n");
  assert.equal(applyHunks(from, hunks, [false, true]), "1\n2\n3\n");
});

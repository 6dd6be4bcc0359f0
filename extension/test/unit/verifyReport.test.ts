import assert from "node:assert/strict";
import { test } from "node:test";
import { verifyFinding, verifyReport } from "../../src/receipts/verifyReport";

const broken = {
  ok: false,
  count: 2,
  error: "line 1: receipt digest does not match its contents",
  line: 1,
  chainOk: false,
  chainError: "line 1: receipt digest does not match its contents",
};

test("a broken chain never says the files are unchanged, whatever drift came back", () => {
  const report = verifyReport({ ...broken, drift: [] });
  assert.doesNotMatch(report, /still has the bytes/);
  assert.match(report, /files were not checked\.$/);
});

test("the tree names a broken chain as such", () => {
  assert.equal(
    verifyFinding({ ...broken, drift: null })?.label,
    "Receipt chain broken",
  );
});

test("the tree names drift in an intact chain as files changed, not a log problem", () => {
  const finding = verifyFinding({
    ok: false,
    count: 2,
    error: "files changed after their receipts",
    line: null,
    chainOk: true,
    chainError: null,
    drift: ["app.py changed after call-1"],
  });
  assert.equal(finding?.label, "Files changed after their receipts");
  assert.match(finding?.message ?? "", /app\.py changed after call-1/);
});

test("a log that verifies has no finding", () => {
  assert.equal(
    verifyFinding({
      ok: true,
      count: 2,
      error: null,
      line: null,
      chainOk: true,
      chainError: null,
      drift: [],
    }),
    null,
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { withExactRule } from "../../src/review/exactRule";

const ARGV = ["python", "-m", "pytest", "-q"];
const TESTS = { decision: "allow", argvPrefix: ["python", "-m", "pytest"] };

test("the exact rule goes after the person's own rules", () => {
  assert.deepEqual(withExactRule([TESTS], ARGV), {
    rules: [TESTS, { decision: "allow", argv: ARGV }],
    added: true,
  });
});

test("no rules yet: the exact rule is the first", () => {
  assert.deepEqual(withExactRule(undefined, ARGV), {
    rules: [{ decision: "allow", argv: ARGV }],
    added: true,
  });
});

test("a rule that is there already is not written twice", () => {
  const rules = [{ decision: "allow", argv: ARGV }];
  assert.deepEqual(withExactRule(rules, ARGV), { rules, added: false });
});

test("a value that is not a list is never overwritten", () => {
  assert.deepEqual(withExactRule({ decision: "allow" }, ARGV), {
    problem:
      "your counterfoil.approvalRules is not a list of rules; fix it in your user settings first",
  });
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { argvText } from "../../src/argvText";

test("a newline in an argument is shown escaped, never as a space", () => {
  assert.equal(
    argvText(["python3", "-c", "import os\nprint(1)"]),
    "python3 -c $'import os\\nprint(1)'",
  );
});

test("tabs, carriage returns and other control characters are escaped too", () => {
  assert.equal(argvText(["a\tb\rc\u001b[31m"]), "$'a\\tb\\rc\\x1b[31m'");
  assert.equal(argvText(["x\u2028y"]), "$'x\\u2028y'");
});

test("a quote or backslash beside a newline is escaped so the word reads back exactly", () => {
  assert.equal(argvText(["it's\n\\"]), "$'it\\'s\\n\\\\'");
});

test("plain words stay as they are and words with spaces are single-quoted", () => {
  assert.equal(
    argvText(["python", "-m", "pytest", "tests/test_math.py", "-k", "a b"]),
    "python -m pytest tests/test_math.py -k 'a b'",
  );
});

test("a word holding a single quote is double-quoted, never spliced with '\\''", () => {
  assert.equal(
    argvText(["python3", "-c", "print('hi there')"]),
    `python3 -c "print('hi there')"`,
  );
});

test("a single quote beside what double quotes would expand is escaped in the $'…' form", () => {
  assert.equal(
    argvText(["sh", "-c", `echo "it's" $HOME`]),
    `sh -c $'echo "it\\'s" $HOME'`,
  );
});

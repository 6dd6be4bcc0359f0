// A command's argv as one line a person can read back exactly: words are shell-quoted, and a
// word holding a newline, a tab or any other control character is written in the shell's
// `$'…'` form with the character escaped (`$'import os\nprint(1)'`), so two lines never read
// as one line with a space and nothing in a word can start a line of its own. A word holding a
// single quote is double-quoted when nothing in it is special there (`"it's"`), else written in
// the `$'…'` form (`$'it\'s $HOME'`): never the `'\''` splice, which few people read back. Pure.

const PLAIN = /^[\w@%+=:,./-]+$/;
// What a shell treats specially inside double quotes (and `!`, history expansion in bash).
const DOUBLE_SPECIAL = /["$`\\!]/;
// C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const NAMED: Record<string, string> = {
  "\n": "\\n",
  "\t": "\\t",
  "\r": "\\r",
  "\\": "\\\\",
  "'": "\\'",
};

export function argvText(argv: readonly string[]): string {
  return argv.map(argvWord).join(" ");
}

export function argvWord(word: string): string {
  if (PLAIN.test(word)) {
    return word;
  }
  if (CONTROL.test(word)) {
    return dollarQuoted(word);
  }
  if (!word.includes("'")) {
    return `'${word}'`;
  }
  return DOUBLE_SPECIAL.test(word) ? dollarQuoted(word) : `"${word}"`;
}

function dollarQuoted(word: string): string {
  return `$'${[...word].map(escaped).join("")}'`;
}

function escaped(character: string): string {
  const named = NAMED[character];
  if (named !== undefined) {
    return named;
  }
  if (!CONTROL.test(character)) {
    return character;
  }
  const code = character.codePointAt(0) ?? 0;
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

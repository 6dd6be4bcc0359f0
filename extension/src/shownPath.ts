// A path or name as one line a person can read back, and any text a question shows with
// nothing hidden in it: pure, shared by every question.

// What shows as nothing (or a blank) yet changes what a text says or which name it is:
// Unicode's default-ignorable code points (bidi controls and marks, zero-width spaces and
// joiners, variation selectors, Hangul fillers, the combining grapheme joiner, tags, …) and
// the braille blank, as the daemon's `INVISIBLE` (files/path_text.py) lists them.
const INVISIBLE =
  "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f" +
  "\\u202a-\\u202e\\u2060-\\u206f\\u2800\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8" +
  "\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}";
// Combining characters are listed on purpose: each is matched (and shown) on its own.
const IN_A_PATH = new RegExp(
  // eslint-disable-next-line no-misleading-character-class
  `[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029${INVISIBLE}]`,
  "gu",
);
const IN_TEXT = new RegExp(
  // eslint-disable-next-line no-misleading-character-class
  `[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029${INVISIBLE}]`,
  "gu",
);

function visible(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return code < 0xa0
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/**
 * A path as one line of text: control characters (a newline in a file name would start a
 * forged line) and invisible characters made visible, as the daemon's `shown_path` does.
 */
export function shownPath(path: string): string {
  return path.replace(IN_A_PATH, visible);
}

/**
 * Text a question shows (a description, a schema, arguments): its lines and tabs kept, every
 * other control character and every invisible one made visible, as the terminal's
 * `terminal_safe` does.
 */
export function shownText(text: string): string {
  return text.replace(IN_TEXT, visible);
}

// A path or name as one line a person can read back: pure, shared by every question.

/**
 * A path as one line of text: control characters (a newline in a file name would start a
 * forged line) and bidi controls made visible, as the daemon's `shown_path` does.
 */
export function shownPath(path: string): string {
  return path.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f]|[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (char) => {
      const code = char.charCodeAt(0);
      return code < 0xa0
        ? `\\x${code.toString(16).padStart(2, "0")}`
        : `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
    },
  );
}

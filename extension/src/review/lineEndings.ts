// Line endings survive review exactly. A VS Code document holds one end-of-line sequence, so a
// proposal that mixes CRLF and LF reads back from its editor with every line normalised; the
// bytes approved must still be the bytes proposed unless the person typed something, and a
// change of line endings, which the diff editor cannot show, is said in words. Pure, unit-tested.

import { computeHunks, splitLines } from "./hunks";

function ending(line: string): "" | "\n" | "\r\n" {
  return line.endsWith("\r\n") ? "\r\n" : line.endsWith("\n") ? "\n" : "";
}

function content(line: string): string {
  return line.slice(0, line.length - ending(line).length);
}

/**
 * `edited` (an editor's text of `exact`, possibly changed by the person) with the exact line
 * endings of `exact` on every line the person left alone; lines they typed keep the editor's.
 * So an untouched proposal comes back byte for byte, whatever the editor normalised.
 */
export function restoreLineEndings(exact: string, edited: string): string {
  if (exact === edited) {
    return exact;
  }
  const a = splitLines(exact);
  const b = splitLines(edited);
  const keys = (lines: string[]) =>
    lines.map((line) => `${content(line)}\n`).join("");
  const hunks = computeHunks(keys(a), keys(b));
  const out: string[] = [];
  let i = 0;
  let j = 0;
  const same = (until: number) => {
    for (; i < until; i++, j++) {
      const typed = ending(b[j]);
      out.push(content(a[i]) + (typed === "" ? "" : ending(a[i]) || typed));
    }
  };
  for (const hunk of hunks) {
    same(hunk.baseStart);
    out.push(...b.slice(j, j + hunk.added.length));
    i += hunk.baseCount;
    j += hunk.added.length;
  }
  same(a.length);
  return out.join("");
}

function name(eol: "\n" | "\r\n"): string {
  return eol === "\n" ? "LF" : "CRLF";
}

function dominant(lines: string[]): "\n" | "\r\n" | undefined {
  const crlf = lines.filter((line) => ending(line) === "\r\n").length;
  const lf = lines.filter((line) => ending(line) === "\n").length;
  return crlf + lf === 0 ? undefined : crlf > lf ? "\r\n" : "\n";
}

/**
 * What the proposal does to line endings that the diff cannot show, e.g. "2 changed lines end
 * in LF in a CRLF file (lines 4–5)"; undefined when every line it writes ends like the file.
 */
export function lineEndingNote(
  base: string,
  proposed: string,
): string | undefined {
  const file = dominant(splitLines(base)) ?? dominant(splitLines(proposed));
  if (file === undefined) {
    return undefined;
  }
  const lines: number[] = [];
  let shift = 0;
  for (const hunk of computeHunks(base, proposed)) {
    const first = hunk.baseStart + shift;
    hunk.added.forEach((line, index) => {
      const eol = ending(line);
      if (eol !== "" && eol !== file) {
        lines.push(first + index + 1);
      }
    });
    shift += hunk.added.length - hunk.baseCount;
  }
  if (lines.length === 0) {
    return undefined;
  }
  const other = name(file === "\n" ? "\r\n" : "\n");
  const where =
    lines.length === 1
      ? `line ${lines[0]}`
      : lines[lines.length - 1] - lines[0] === lines.length - 1
        ? `lines ${lines[0]}–${lines[lines.length - 1]}`
        : `lines ${lines.slice(0, 5).join(", ")}${lines.length > 5 ? ", …" : ""}`;
  return `${lines.length} changed line${lines.length === 1 ? "" : "s"} end${lines.length === 1 ? "s" : ""} in ${other} in a ${name(file)} file (${where})`;
}

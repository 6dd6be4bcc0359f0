// Hunks of an edit proposal, for display and for keeping or dropping each one: a line diff of the
// base the model read against the proposed text (longest common subsequence), grouped into
// runs of changed lines. Pure, unit-tested. The daemon checks whatever final text is sent.

export interface Hunk {
  /** First base line the hunk replaces (0-based) and how many. */
  baseStart: number;
  baseCount: number;
  /** The lines the hunk puts there instead. */
  removed: string[];
  added: string[];
}

/** Lines with their end-of-line kept, so joining them gives the text back byte for byte. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The changed runs between `base` and `proposed`, in order. */
export function computeHunks(base: string, proposed: string): Hunk[] {
  const a = splitLines(base);
  const b = splitLines(proposed);
  // Trim the common head and tail: a proposal usually touches a few lines of a larger file.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  // lengths[i][j]: longest common subsequence of x[i:] and y[j:].
  const lengths: number[][] = Array.from({ length: x.length + 1 }, () =>
    new Array<number>(y.length + 1).fill(0),
  );
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lengths[i][j] =
        x[i] === y[j]
          ? lengths[i + 1][j + 1] + 1
          : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const hunks: Hunk[] = [];
  let current: Hunk | undefined;
  const close = () => {
    if (current) {
      hunks.push(current);
      current = undefined;
    }
  };
  const open = (i: number): Hunk =>
    (current ??= {
      baseStart: head + i,
      baseCount: 0,
      removed: [],
      added: [],
    });
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      close();
      i++;
      j++;
    } else if (
      j < y.length &&
      (i >= x.length || lengths[i][j + 1] >= lengths[i + 1][j])
    ) {
      open(i).added.push(y[j]);
      j++;
    } else {
      const hunk = open(i);
      hunk.removed.push(x[i]);
      hunk.baseCount++;
      i++;
    }
  }
  close();
  return hunks;
}

/** The base with only the kept hunks applied (`keep[k]` false drops hunk k). */
export function applyHunks(
  base: string,
  hunks: readonly Hunk[],
  keep: readonly boolean[],
): string {
  const lines = splitLines(base);
  const out: string[] = [];
  let at = 0;
  hunks.forEach((hunk, index) => {
    out.push(...lines.slice(at, hunk.baseStart));
    out.push(...(keep[index] === false ? hunk.removed : hunk.added));
    at = hunk.baseStart + hunk.baseCount;
  });
  out.push(...lines.slice(at));
  return out.join("");
}

/** A short readable name for a hunk: "line 3: -1 +1" (1-based). */
export function hunkLabel(hunk: Hunk): string {
  const first = hunk.baseStart + 1;
  const where =
    hunk.baseCount > 1
      ? `lines ${first}–${first + hunk.baseCount - 1}`
      : `line ${first}`;
  return `${where}: −${hunk.removed.length} +${hunk.added.length}`;
}

// The person's approval rules with one more exact-argv `allow` rule after them: what "Always
// Allow" on a command's question writes to their user settings. Pure, unit-tested.

/** The exact-argv rule for `argv`, as docs/settings.md writes one. */
function exactRule(argv: readonly string[]): {
  decision: "allow";
  argv: string[];
} {
  return { decision: "allow", argv: [...argv] };
}

/**
 * The person's rules with `argv`'s exact rule after them (unchanged when it is there already),
 * or why they cannot be written: a value that is not a list is the person's to fix, never
 * overwritten.
 */
export function withExactRule(
  current: unknown,
  argv: readonly string[],
): { rules: unknown[]; added: boolean } | { problem: string } {
  const rules = current === undefined ? [] : current;
  if (!Array.isArray(rules)) {
    return {
      problem:
        "your counterfoil.approvalRules is not a list of rules; fix it in your user settings first",
    };
  }
  const list: unknown[] = rules as unknown[];
  const rule = exactRule(argv);
  const same = list.some(
    (entry: unknown) => JSON.stringify(entry) === JSON.stringify(rule),
  );
  return same
    ? { rules: list, added: false }
    : { rules: [...list, rule], added: true };
}

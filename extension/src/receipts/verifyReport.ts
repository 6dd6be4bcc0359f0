// Verify's answer in words a person reads correctly: the chain (intact, or broken at a line and
// why) and the files (which ones are no longer what the agent wrote). It never states a fact
// that was not established: with a broken chain the files were not compared. Pure, unit-tested.

import type { VerifyResult } from "../daemon/protocol";

/** What Verify found, named for the tree's row: the label is the finding, not "a problem". */
export interface VerifyFinding {
  label: string;
  message: string;
}

function chainIntact(result: VerifyResult): boolean {
  return (
    result.chainOk ??
    (result.ok || result.line === undefined ? result.ok : false)
  );
}

export function chainWords(result: VerifyResult): string {
  if (chainIntact(result)) {
    return `the receipt chain is intact (${result.count} receipt${result.count === 1 ? "" : "s"}, none altered or removed)`;
  }
  const problem = result.chainError ?? result.error ?? "unknown reason";
  const where =
    typeof result.line === "number"
      ? `; the ${result.line - 1} receipt${result.line - 1 === 1 ? "" : "s"} before line ${result.line} are intact`
      : "";
  return `the receipt chain is broken: ${problem}${where}`;
}

export function driftWords(result: VerifyResult): string {
  const drift = result.drift;
  // A broken chain cannot say which bytes are the agent's: whatever came back, nothing was
  // established about the files.
  if (!chainIntact(result) || drift === undefined || drift === null) {
    return "files were not checked";
  }
  if (drift.length === 0) {
    return "every file the agent wrote still has the bytes it wrote";
  }
  return `files no longer what the agent wrote: ${drift.join("; ")}`;
}

/** One line: the chain, then the files. */
export function verifyReport(result: VerifyResult): string {
  const chain = chainWords(result);
  const files = driftWords(result);
  return `${chain.charAt(0).toUpperCase()}${chain.slice(1)}; ${files}.`;
}

/** The tree's row for a failed check, or null when everything verified. */
export function verifyFinding(result: VerifyResult): VerifyFinding | null {
  if (result.ok) {
    return null;
  }
  const label = !chainIntact(result)
    ? "Receipt chain broken"
    : (result.drift?.length ?? 0) > 0
      ? "Files changed after their receipts"
      : "Receipt check failed";
  return { label, message: verifyReport(result) };
}

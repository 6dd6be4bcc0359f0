// Verify's answer in words a person reads correctly: the chain (intact, or broken at a line and
// why) and the files (which ones are no longer what the agent wrote). Pure, unit-tested.

import type { VerifyResult } from "./protocol";

export function chainWords(result: VerifyResult): string {
  const chainOk =
    result.chainOk ??
    (result.ok || result.line === undefined ? result.ok : false);
  if (chainOk) {
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
  if (drift === undefined || drift === null) {
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

import assert from "node:assert/strict";
import { test } from "node:test";
import manifest from "../../package.json";

test("the walkthrough's interpreter step is checked off by an interpreter that runs, never by a click", () => {
  const step = manifest.contributes.walkthroughs[0].steps.find(
    (candidate) => candidate.id === "interpreter",
  );
  // Set when the daemon starts on it or Check Setup finds it (setup/walkthrough.ts).
  assert.deepEqual(step?.completionEvents, [
    "onContext:counterfoil.interpreterReady",
  ]);
});

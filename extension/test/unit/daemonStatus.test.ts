import assert from "node:assert/strict";
import { test } from "node:test";
import { describeDaemon, historyLine } from "../../src/model/daemonStatus";

const lostAt = new Date(2026, 0, 2, 14, 3, 7);
const restartedAt = new Date(2026, 0, 2, 14, 3, 9);

test('a daemon that was never lost is unloaded while it runs and not running, never "stopped", before it starts', () => {
  assert.deepEqual(describeDaemon(true, {}), {
    text: "$(circle-outline) Counterfoil: unloaded",
    tooltip: "The daemon is running; the model loads on the first run.",
  });
  assert.equal(
    describeDaemon(false, {}).text,
    "$(debug-disconnect) Counterfoil: not running",
  );
  assert.equal(historyLine({}), null);
});

test("a crashed daemon says it stopped unexpectedly, and when, in its text and its tooltip", () => {
  const { text, tooltip } = describeDaemon(false, { lostAt });
  assert.equal(text, "$(warning) Counterfoil: daemon stopped");
  assert.match(tooltip, /^The daemon stopped unexpectedly at 14:03:07; /);
  assert.doesNotMatch(tooltip, /is running/);
});

test("after the restart the text and the tooltip tell the same story: a fresh daemon after a crash", () => {
  const { text, tooltip } = describeDaemon(true, { lostAt, restartedAt });
  assert.equal(text, "$(circle-outline) Counterfoil: unloaded (restarted)");
  assert.equal(
    tooltip,
    "The daemon is running; the model loads on the first run.\nThe daemon stopped unexpectedly at 14:03:07; a fresh one started at 14:03:09.",
  );
});

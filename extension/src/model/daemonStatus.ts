// Words for the status bar about the daemon itself: running or not, and, after it stopped
// without being asked to (a crash, a kill), when that was and when a fresh one took its place,
// so its text and tooltip tell one story. Pure, unit-tested.

import type { ModelStatusText } from "./modelState";

/** What the client saw of its daemons: the last one that stopped unasked, and its successor. */
export interface DaemonHistory {
  /** When a daemon last stopped without being asked to. */
  lostAt?: Date;
  /** When a fresh daemon answered after that. */
  restartedAt?: Date;
}

/** 14:03:07, as the receipts tree gives times. */
function clock(at: Date): string {
  return at.toTimeString().slice(0, 8);
}

/** The line every tooltip carries after a crash (none before one). */
export function historyLine(history: DaemonHistory): string | null {
  if (!history.lostAt) {
    return null;
  }
  const lost = `The daemon stopped unexpectedly at ${clock(history.lostAt)}`;
  return history.restartedAt
    ? `${lost}; a fresh one started at ${clock(history.restartedAt)}.`
    : `${lost}; the next request starts a fresh one.`;
}

/** The daemon's state before any model state is known: unloaded, stopped, or lost. */
export function describeDaemon(
  running: boolean,
  history: DaemonHistory,
): ModelStatusText {
  const history_ = historyLine(history);
  if (!running) {
    return history.lostAt && !history.restartedAt
      ? {
          text: "$(warning) Counterfoil: daemon stopped",
          tooltip: `${history_} The run panel says what became of its run.`,
        }
      : {
          text: "$(debug-disconnect) Counterfoil: not running",
          tooltip:
            "The daemon is not running; it starts with the first run or request.",
        };
  }
  return {
    text: `$(circle-outline) Counterfoil: unloaded${history.restartedAt ? " (restarted)" : ""}`,
    tooltip: [
      "The daemon is running; the model loads on the first run.",
      history_,
    ]
      .filter((line) => line !== null)
      .join("\n"),
  };
}

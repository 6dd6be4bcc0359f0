"""Discarding a run the person will not go on with: it is closed for good, and says so.

A discarded run is an interrupted or paused one the person chose to drop. Its checkpoint is
closed (`ended`, reason `discarded`) and its own record gets the matching `ended` line, so
every listing (the terminal's `counterfoil sessions`, the editor's) reads `discarded` and no
resume offers it again. Nothing it did is undone: the files its receipts show it changed stay
as they are (a receipt's Revert undoes one), and its open approval, if any, is never asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..receipt_evidence import utc_now
from ..verdict import EFFECT_STATES
from .decisions import DECISIONS_FILE, DecisionLog, read_entries
from .record import DISCARDED, CheckpointRefused
from .store import SessionStore


@dataclass(frozen=True)
class Discarded:
    """What discarding a run did: closed it, leaving its open approval (`pending`: the tool
    and path or command it asked for) unasked."""

    run_id: str
    goal: str
    pending: str | None


def discard_run(sessions: SessionStore, root: Path, run_id: str) -> Discarded:
    """Close `run_id` as discarded; CheckpointRefused (one sentence) when it is not a run
    that can be resumed here: unknown, running (its lock is held), ended or unreadable."""
    sessions.require_run(run_id, root)
    with sessions.lock(run_id):  # refused while a process runs or resumes it
        record = sessions.load(run_id)
        if record.state == "ended":
            why = "discarded" if record.reason == DISCARDED else f"ended ({record.reason})"
            raise CheckpointRefused(f"run {run_id} was already {why}; there is nothing to discard")
        entries = read_entries(sessions.run_folder(run_id) / DECISIONS_FILE)
        sessions.write(record.with_state("ended", DISCARDED, utc_now()))
        DecisionLog(sessions, run_id).ended("ended", DISCARDED, _verdict_so_far(entries))
    pending = record.pending
    shown = None
    if pending is not None:
        target = pending.arguments.get("path") or pending.arguments.get("argv")
        shown = f"{pending.tool} {target}" if target else pending.tool
    return Discarded(run_id, record.checkpoint.task, shown)


def _verdict_so_far(entries: list[dict[str, object]]) -> dict[str, object]:
    """The record's decisions counted by state, and the validation its last pause or end
    named (None: it stopped without naming one)."""
    counts: dict[str, int] = dict.fromkeys(EFFECT_STATES, 0)
    validation = None
    for entry in entries:
        if entry.get("kind") == "decision" and entry.get("state") in counts:
            counts[str(entry["state"])] += 1
        elif entry.get("kind") in ("paused", "ended"):
            verdict = entry.get("verdict")
            validation = verdict.get("validation") if isinstance(verdict, dict) else None
    return {"effects": counts, "validation": validation}

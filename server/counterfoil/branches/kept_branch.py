"""The run a kept branch came from ends there: the branch carried it on, so the run is no longer
offered to resume (its checkpoint's state is what every listing reads: the editor's Resume
offer, `counterfoil sessions`, `counterfoil resume`), and its record says why."""

from __future__ import annotations

from typing import Any

from ..sessions.decisions import DecisionLog, read_entries
from ..sessions.store import SessionStore


def kept_reason(branch: str) -> str:
    return f"branch {branch} was kept"


def end_for_kept_branch(sessions: SessionStore, run_id: str, branch: str, now: str) -> None:
    """Ends run `run_id` (paused or interrupted; an ended run stays as it ended) for `branch`.
    The caller holds the run's lock."""
    record = sessions.load(run_id)
    if record.state == "ended":
        return
    reason = kept_reason(branch)
    sessions.write(record.with_state("ended", reason, now))
    log = DecisionLog(sessions, run_id)
    entries = read_entries(log.path)
    last: dict[str, Any] = next(
        (e for e in reversed(entries) if e.get("kind") in ("ended", "paused")), {}
    )
    log.ended("ended", reason, dict(last.get("verdict") or {}))

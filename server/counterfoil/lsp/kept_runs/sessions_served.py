"""The runs kept beside the receipt log, as the daemon serves them: listed, inspected, and
each run's own record, read from the disk alone (so a run of another window, of the terminal,
or of a daemon that died is there too).

Each answer is built from `messages`; a run that cannot be read is listed with its sentence.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ... import protocol as messages
from ...receipts import EffectReceipt
from ...receipts.verify import file_digest, read_receipt_log
from ...sessions.decisions import DECISIONS_FILE, read_entries, verify_decisions
from ...sessions.record import CheckpointRefused, SessionRecord
from ...sessions.reopen import run_state, status_of
from ...sessions.store import SessionStore, StoredRun


class UnknownRun(CheckpointRefused):
    """No run of that id in this root."""


def list_sessions(log_path: Path) -> messages.SessionsResult:
    """`counterfoil/sessions`: every run with a checkpoint, oldest first."""
    written = files_written(log_path)
    shown = [
        session_info(run, written.get(run.run_id, [])) for run in SessionStore(log_path).runs()
    ]
    return messages.SessionsResult(sessions=shown, error=None)


def inspect_session(log_path: Path, root: Path, run_id: str) -> messages.InspectResult:
    """`counterfoil/inspect`: the status of one run; raises CheckpointRefused (UnknownRun)."""
    sessions = SessionStore(log_path)
    found = [run for run in sessions.runs() if run.run_id == run_id]
    if not found:
        sessions.run_folder(run_id)  # a malformed id is refused as such
        raise UnknownRun(f"there is no run {run_id} in {root}")
    run = found[0]
    if run.record is None:
        raise CheckpointRefused(run.problem or f"the checkpoint of run {run_id} is unreadable")
    status = status_of(run.record)
    info = session_info(run, files_written(log_path).get(run_id, []))
    changed = [
        path
        for path, digest in sorted(run.record.read_digests.items())
        if file_digest(root, path) != digest
    ]
    return messages.InspectResult(
        **{name: getattr(info, name) for name in info.__dataclass_fields__},
        lastEvidence=status.last_evidence,
        nextStep=status.next_step,
        changedSinceRead=changed,
    )


def discard_session(log_path: Path, root: Path, run_id: str) -> messages.DiscardResult:
    """`counterfoil/discard`: close an interrupted or paused run for good; raises
    CheckpointRefused with the sentence that says why not."""
    from ...sessions.discard import discard_run

    discarded = discard_run(SessionStore(log_path), root, run_id)
    return messages.DiscardResult(
        runId=discarded.run_id,
        goal=discarded.goal,
        pending=discarded.pending,
        filesChanged=files_written(log_path).get(run_id, []),
    )


def session_info(run: StoredRun, written: list[messages.FileWritten]) -> messages.SessionInfo:
    record = run.record
    updated = datetime.fromtimestamp(run.modified, UTC).isoformat(timespec="seconds")
    if record is None:
        return messages.SessionInfo(
            runId=run.run_id,
            state="unreadable",
            goal=None,
            steps=0,
            lastAction=None,
            updatedAt=updated,
            pending=None,
            filesChanged=written,
            problem=run.problem,
        )
    return messages.SessionInfo(
        runId=run.run_id,
        state=run_state(run),  # type: ignore[arg-type]
        goal=record.checkpoint.task,
        steps=record.steps,
        lastAction=status_of(record, evidence_chars=60).last_action,
        updatedAt=updated,
        pending=pending_of(record),
        filesChanged=written,
        problem=None,
    )


def pending_of(record: SessionRecord) -> messages.PendingProposal | None:
    pending = record.pending
    if pending is None:
        return None
    return messages.PendingProposal(
        toolCallId=pending.call_id, tool=pending.tool, arguments=dict(pending.arguments)
    )


def files_written(log_path: Path) -> dict[str, list[messages.FileWritten]]:
    """By run id: each file a verified receipt says the run changed, and by which call."""
    written: dict[str, list[messages.FileWritten]] = {}

    def note(receipt: EffectReceipt) -> None:
        run_id = receipt.evidence.run_id
        if run_id is None:
            return
        digest = receipt.evidence.result_sha256
        for path in receipt.changed_artifacts:
            written.setdefault(run_id, []).append(
                messages.FileWritten(
                    path=path,
                    toolCallId=receipt.tool_call_id,
                    tool=receipt.tool,
                    sha256=digest,
                )
            )

    if log_path.exists():
        read_receipt_log(log_path, note)
    return written


def run_records(log_path: Path) -> list[messages.StoredRunRecord]:
    """`counterfoil/receipts`' `records`: every run's own record, oldest first."""
    sessions = SessionStore(log_path)
    records = []
    for run_id in sessions.run_ids():
        path = sessions.run_folder(run_id) / DECISIONS_FILE
        entries = read_entries(path)
        if entries:
            _, problem = verify_decisions(path)
            records.append(stored_record(run_id, entries, problem))
    records.sort(key=lambda record: record.startedAt or "")
    return records


def stored_record(
    run_id: str, entries: Iterable[dict[str, Any]], problem: str | None
) -> messages.StoredRunRecord:
    """One run's record from its lines: the first start, the last end, every decision."""
    goal = by = via = started = ended = state = reason = validation = None
    effects: dict[str, int] | None = None
    resumed = 0
    decisions: list[messages.Decision] = []
    for entry in entries:
        kind = entry.get("kind")
        if kind in ("started", "resumed"):
            resumed += kind == "resumed"
            if goal is None:
                goal, by, via = entry.get("goal"), entry.get("by"), entry.get("via")
                started = entry.get("time")
            state = reason = ended = None  # it goes on
        elif kind in ("ended", "paused"):
            state, reason, ended = kind, entry.get("reason"), entry.get("time")
            if kind == "paused" and reason == "interrupted":
                state = "interrupted"  # its daemon went away: as the run's listing says it
            verdict = entry.get("verdict") or {}
            effects, validation = verdict.get("effects"), verdict.get("validation")
        elif kind in ("decision", "settled") and isinstance(entry.get("call_id"), str):
            decisions.append(decision_of(entry))
    return messages.StoredRunRecord(
        runId=run_id,
        goal=goal,
        by=by,
        via=via,
        startedAt=started,
        endedAt=ended,
        state=state,
        reason=reason,
        effects=effects,
        validation=validation,
        resumed=resumed,
        decisions=decisions,
        problem=problem,
    )


def decision_of(entry: dict[str, Any]) -> messages.Decision:
    settled = entry.get("kind") == "settled"
    argv = entry.get("argv")
    return messages.Decision(
        toolCallId=entry["call_id"],
        tool=entry.get("tool"),
        state="settled" if settled else str(entry.get("state")),
        reason=entry.get("outcome") if settled else entry.get("reason"),
        path=entry.get("path"),
        argv=[str(item) for item in argv] if isinstance(argv, list) else None,
        time=entry.get("time"),
    )

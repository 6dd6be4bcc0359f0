"""Before a run continues: the checks a resume makes, each refusal one sentence.

The checkpoint must be whole and of a known format, belong to this root and this log, and the
log must still extend the head it recorded; a file the model read that has changed since is
dropped from what it may edit without reading again, and the model is told.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..actions import ToolAction
from ..errors import AgentError
from ..receipts import ReceiptStore
from ..receipts.chain import head_matches_prefix
from ..receipts.head import LogHead
from ..receipts.logfile import locked_log
from ..receipts.signing import load_signer, signature_checker
from ..receipts.verify import file_digest
from .decisions import DECISIONS_FILE, read_entries, verify_decisions
from .record import DISCARDED, CheckpointRefused, LogPosition, SessionRecord
from .steering import AgentStatus, bounded_preview, completed_tool_boundary
from .store import RunLock, SessionStore, StoredRun

RESUME_NOTICE_PREFIX = "Resume notice:\n"


@dataclass
class ResumePlan:
    """A checked checkpoint, locked for this process, and what the model must be told."""

    record: SessionRecord
    lock: RunLock
    read_digests: dict[str, str]
    changed: list[str] = field(default_factory=list)

    def notice(self) -> str | None:
        if not self.changed:
            return None
        names = ", ".join(self.changed)
        return (
            f"{RESUME_NOTICE_PREFIX}the run was resumed; these files changed since you read "
            f"them: {names}. Read them again before changing them."
        )


def run_state(run: StoredRun) -> str:
    """interrupted (stopped without saying so, or because its client went away), paused (as
    the person asked), discarded (closed by the person instead of resumed), ended, running
    (live) or unreadable."""
    if run.record is None:
        return "unreadable"
    if run.live:
        return "running"
    if run.record.state == "running":
        return "interrupted"
    if run.record.state == "paused" and run.record.reason == "interrupted":
        return "interrupted"
    if run.record.state == "ended" and run.record.reason == DISCARDED:
        return DISCARDED
    return run.record.state


def resumable(run: StoredRun) -> bool:
    return run_state(run) in ("interrupted", "paused")


def open_for_resume(sessions: SessionStore, root: Path, run_id: str | None = None) -> ResumePlan:
    """The run to resume (default: the latest interrupted or paused one), locked and checked;
    raises CheckpointRefused."""
    if run_id is None:
        candidates = [run for run in sessions.runs() if resumable(run)]
        if not candidates:
            raise CheckpointRefused(f"nothing to resume in {root}: no interrupted or paused run")
        run_id = candidates[-1].run_id
    else:
        sessions.require_run(run_id, root)
    lock = sessions.lock(run_id)
    try:
        record = sessions.load(run_id)
        plan = _check(record, sessions, root, lock)
    except BaseException:
        lock.release()
        raise
    return plan


def _check(record: SessionRecord, sessions: SessionStore, root: Path, lock: RunLock) -> ResumePlan:
    name = record.run_id
    if record.state == "ended":
        raise CheckpointRefused(f"run {name} ended ({record.reason}); there is nothing to resume")
    check_origin(record, sessions, root)
    check_run_record(sessions, name)
    kept, changed = read_files_kept(record, root, own_writes(sessions, name))
    return ResumePlan(record, lock, kept, changed)


def own_writes(sessions: SessionStore, run_id: str) -> dict[str, set[str]]:
    """The bytes (by digest) the run's own receipted file effects left, by path: a file that
    holds them changed by the run itself, not behind its back."""
    written: dict[str, set[str]] = {}
    store = ReceiptStore(sessions.log_path, signer=None)
    for receipt in store.iter_receipts():
        digest = receipt.evidence.result_sha256
        if receipt.evidence.run_id != run_id or digest is None:
            continue
        for path in receipt.changed_artifacts:
            written.setdefault(path, set()).add(digest)
    return written


def check_origin(record: SessionRecord, sessions: SessionStore, root: Path) -> None:
    """The checkpoint belongs to this root and this log, and the log still extends it."""
    name = record.run_id
    if record.root != str(root):
        raise CheckpointRefused(
            f"the checkpoint of run {name} belongs to another folder ({record.root})"
        )
    if record.log != str(sessions.log_path):
        raise CheckpointRefused(
            f"the checkpoint of run {name} belongs to another receipt log ({record.log})"
        )
    if not log_extends(sessions.log_path, record):
        raise CheckpointRefused(
            f"the receipt log no longer extends what run {name} recorded "
            f"({record.log_position.count} receipts): it was rewritten or cut"
        )


def check_run_record(sessions: SessionStore, run_id: str) -> None:
    """The run's record verifies (signed by this installation's key when its lines are
    signed): a resumed verdict is built on it, so a changed word must not change it."""
    path = sessions.run_folder(run_id) / DECISIONS_FILE
    check = None
    entries = read_entries(path)
    if entries and "signature" in entries[0]:
        try:
            signer = load_signer()
        except (AgentError, ImportError):
            signer = None
        if signer is not None:
            check = signature_checker(signer.public_key)
    _, problem = verify_decisions(path, check)
    if problem is not None:
        raise CheckpointRefused(
            f"the record of run {run_id} does not verify ({problem}); it is not resumed"
        )


def read_files_kept(
    record: SessionRecord, root: Path, written: dict[str, set[str]] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The files the model read that still hold what it read (or what its own receipted
    effect wrote there, `written`), and those changed since."""
    kept: dict[str, str] = {}
    changed: list[str] = []
    for path, digest in sorted(record.read_digests.items()):
        current = file_digest(root, path)
        if current == digest or (current is not None and current in (written or {}).get(path, ())):
            kept[path] = current
        else:
            changed.append(path)
    return kept, changed


def log_extends(log_path: Path, record: SessionRecord) -> bool:
    """Whether the log still begins with the bytes the checkpoint's head describes."""
    return position_extends(log_path, record.log_position)


def position_extends(log_path: Path, position: LogPosition) -> bool:
    """Whether the log still begins with the bytes `position` describes."""
    if position.length == 0:
        return True
    head = LogHead(position.count, position.lines, position.length, position.link, True, None, 0)
    try:
        with locked_log(log_path, write=False) as fd:
            return fd is not None and head_matches_prefix(fd, head, os.fstat(fd).st_size)
    except (AgentError, OSError):
        return False


def status_of(record: SessionRecord, evidence_chars: int = 160) -> AgentStatus:
    """The inspect status of a durable checkpoint, also when it ends at an open approval or
    before the first tool call (the course's form where it applies)."""
    task = record.checkpoint.task
    pending = record.pending
    try:
        action, evidence = completed_tool_boundary(record.checkpoint)
        last_action = _compact({"tool": action.tool, **action.arguments})
        last_evidence = bounded_preview(evidence, evidence_chars)
        next_step = f"resume the model after the completed {action.tool} observation"
    except AgentError:
        last_action, last_evidence = "(none)", "(none)"
        next_step = "start the model on the goal"
    if pending is not None:
        target = pending.arguments.get("path", pending.arguments.get("argv"))
        next_step = f"ask again for {pending.call_id} ({pending.tool} {target}), as a new proposal"
    return AgentStatus(task, last_action, last_evidence, next_step)


def pending_action(record: SessionRecord) -> ToolAction | None:
    pending = record.pending
    return None if pending is None else ToolAction(pending.tool, dict(pending.arguments))


def _compact(value: object) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))

"""Checking a whole log offline: every line, the head, signatures, and the files themselves."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..errors import AgentError
from ..files.path_text import shown_path
from ..receipt_fields import ReceiptEvidence, TreeChangesRecord
from .chain import ChainState, head_problem, iter_lines, receipt_from_line, take_lines
from .errors import ReceiptLogError
from .head import LogHead, read_head
from .logfile import locked_log
from .record import EffectReceipt
from .signing import SignatureChecker


@dataclass(frozen=True)
class ReceiptLogReport:
    ok: bool
    count: int
    error: str | None = None
    line: int | None = None
    signed: bool = False
    drift: tuple[str, ...] = field(default=())
    # Whether the files were compared at all: a broken chain leaves drift unknown, never "none".
    drift_checked: bool = False


def verify_receipt_log(
    path: str | Path, public_key: str | None = None, root: str | Path | None = None
) -> ReceiptLogReport:
    """Check a whole log without raising: how many receipts, or the first broken line.

    With `public_key`, every signed line and the head must be signed by it and verify, and
    the log must be signed. With `root`, each file's bytes are compared with its last
    receipt's `result_sha256`; a difference is drift and fails the check. Files are compared
    only when the chain verifies: a broken log cannot say which bytes are the agent's.
    """
    path = Path(path)
    report = read_receipt_log(path, public_key=public_key)
    if not report.ok or root is None:
        return report
    drift = file_drift(path, Path(root))
    if drift:
        return ReceiptLogReport(
            False,
            report.count,
            "files changed after their receipts",
            None,
            report.signed,
            drift,
            True,
        )
    return replace(report, drift_checked=True)


def read_receipt_log(
    path: Path,
    on_receipt: Callable[[EffectReceipt], None] | None = None,
    public_key: str | None = None,
) -> ReceiptLogReport:
    """Verify every line and the head in one pass, handing each receipt to `on_receipt` as
    soon as its line has verified: what a person is shown as verified comes from here."""
    checker = None
    if public_key is not None:
        try:
            checker = SignatureChecker(public_key)
        except AgentError as error:
            return ReceiptLogReport(False, 0, str(error))
    try:
        with locked_log(path, write=False) as fd:
            state, problem, line = verify_open_log(fd, path, checker, on_receipt)
    except ReceiptLogError as error:
        return ReceiptLogReport(False, 0, str(error), error.line)
    signed = state.signed_by is not None
    if problem is None and public_key is not None and not signed and state.count:
        problem = "the log is not signed"
    if problem is not None:
        return ReceiptLogReport(False, state.count, problem, line, signed)
    return ReceiptLogReport(True, state.count, signed=signed)


def verify_open_log(
    fd: int | None,
    path: Path,
    checker: SignatureChecker | None = None,
    on_receipt: Callable[[EffectReceipt], None] | None = None,
) -> tuple[ChainState, str | None, int | None]:
    """Read every line of a log whose folder lock the caller holds (`fd` None: no log), and
    its head; the state reached and the first problem with its line."""
    state = ChainState()
    head: LogHead | None = None
    try:
        head = read_head(path)
        if fd is None:
            if head is not None and head.length > 0:
                missing = "the receipt log is missing, but its head record lists"
                return state, f"{missing} {head.count} receipts", None
            return state, None, None
        at_head: list[ChainState] = []

        def remember(current: ChainState) -> None:
            if head is not None and current.consumed == head.length:
                at_head[:] = [ChainState(link=current.link, signed_by=current.signed_by)]

        remember(state)
        end = os.fstat(fd).st_size
        take_lines(state, fd, end, checker, remember, on_receipt)
    except ReceiptLogError as error:
        return state, str(error), error.line
    problem = head_problem(head, state, at_head[0] if at_head else None)
    if problem is None and checker is not None and head is not None and head.signed_by:
        try:
            checker.check_head(head.signed_by, head.signed_message(), head.signature)
        except AgentError as error:
            problem = str(error)
    return state, problem, None


def last_results(path: Path) -> dict[str, tuple[str, str | None]]:
    """Each file's last recorded state: path -> (call id, result_sha256 or None if removed)."""
    results: dict[str, tuple[str, str | None]] = {}
    with locked_log(path, write=False) as fd:
        if fd is None:
            return results
        for _, raw, _, complete in iter_lines(fd, 0, os.fstat(fd).st_size):
            if raw is None or not raw.strip():
                continue
            receipt = receipt_from_line(raw, complete)
            for changed, digest in applied_tree_results(receipt.evidence):
                results[changed] = (receipt.tool_call_id, digest)
            if not receipt.evidence.has("result_sha256") or receipt.exit_state != "ok":
                continue
            for artifact in receipt.changed_artifacts:
                results[artifact] = (receipt.tool_call_id, receipt.evidence.result_sha256)
    return results


def applied_tree_results(evidence: ReceiptEvidence) -> list[tuple[str, str | None]]:
    """`tree_results` of what reached the root: a reviewed command's changes were made in a
    copy, and only those its review applied are the root's."""
    found = tree_results(evidence.tree_changes)
    if evidence.review is None:
        return found
    paths = set(evidence.review.applied or ())
    return [item for item in found if item[0] in paths]


def tree_results(record: TreeChangesRecord | None) -> list[tuple[str, str | None]]:
    """The files a command (or a revert of one) left, with their digests, from `tree_changes`:
    regular files only, and only those hashed."""
    found: list[tuple[str, str | None]] = []
    for change in () if record is None else record.changes or ():
        path, after = change.path, change.after_sha256
        if change.kind != "file" or path is None or "after_sha256" in change.unread:
            continue
        if after is not None or change.change == "deleted":
            found.append((path, after))
    return found


def file_drift(path: Path, root: Path) -> tuple[str, ...]:
    """`app.py changed after call-4` for every file whose bytes differ from its last receipt."""
    lines: list[str] = []
    for artifact, (call_id, digest) in sorted(last_results(path).items()):
        current = file_digest(root, artifact)
        if current != digest:
            what = "was removed" if current is None else "changed"
            lines.append(f"{shown_path(artifact)} {what} after {call_id}")
    return tuple(lines)


def file_digest(root: Path, relative: str) -> str | None:
    """SHA-256 of a regular file under `root` (never through a final symlink), or None."""
    target = root.joinpath(*PurePosixPath(relative).parts)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)

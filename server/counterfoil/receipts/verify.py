"""Checking a whole log offline: every line, the head, signatures, and the files themselves."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import AgentError
from .chain import iter_lines, receipt_from_line
from .logfile import locked_log
from .store import verify_log


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

    With `public_key`, every signed line must be signed by it and verify, and the log must be
    signed. With `root`, each file's bytes are compared with its last receipt's
    `result_sha256`; a difference is drift and fails the check.
    """
    path = Path(path)
    check = None
    if public_key is not None:
        from .signing import signature_checker

        try:
            check = signature_checker(public_key)
        except AgentError as error:
            return ReceiptLogReport(False, 0, str(error))
    state, problem, line = verify_log(path, check)
    signed = state.signed_by is not None
    if problem is None and public_key is not None and not signed and state.count:
        problem = "the log is not signed"
    if problem is not None:
        return ReceiptLogReport(False, state.count, problem, line, signed)
    if root is None:
        return ReceiptLogReport(True, state.count, signed=signed)
    drift = file_drift(path, Path(root))
    if drift:
        return ReceiptLogReport(
            False, state.count, "files changed after their receipts", None, signed, drift, True
        )
    return ReceiptLogReport(True, state.count, signed=signed, drift_checked=True)


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
            if "result_sha256" not in receipt.evidence or receipt.exit_state != "ok":
                continue
            for artifact in receipt.changed_artifacts:
                results[artifact] = (receipt.tool_call_id, receipt.evidence["result_sha256"])
    return results


def file_drift(path: Path, root: Path) -> tuple[str, ...]:
    """`app.py changed after call-4` for every file whose bytes differ from its last receipt."""
    lines: list[str] = []
    for artifact, (call_id, digest) in sorted(last_results(path).items()):
        current = _digest_of(root, artifact)
        if current != digest:
            what = "was removed" if current is None else "changed"
            lines.append(f"{artifact} {what} after {call_id}")
    return tuple(lines)


def _digest_of(root: Path, relative: str) -> str | None:
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

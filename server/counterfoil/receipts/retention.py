"""What the content store must keep, and `receipts gc`, which removes the rest.

Every log in a folder shares its `objects/`. So gc keeps every digest that any receipt of any
log in the folder (a file with a head beside it, or a `*.jsonl` whose first line is a receipt)
names (anywhere in its evidence: `base_sha256`, `result_sha256`,
`output_sha256`, `approval.shown_sha256`, and fields added later), every digest another part
registers with `register_digest_source` (run records, checkpoints), and every name a live hold
lists (an effect in progress). All of it is read under the log folder's exclusive lock, the
one gc deletes under, and a log in the folder that does not verify stops gc before it removes
anything: gc never deletes what it could not account for.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .content import DIGEST, OBJECTS_FOLDER, is_temporary_object
from .errors import ReceiptLogError
from .head import HEAD_SUFFIX
from .hold import held_names, open_private_folder
from .logfile import LOCK_TIMEOUT_SECONDS, lock, locked_log, open_log
from .own_folder import own_folder, shares_folder
from .record import EffectReceipt
from .verify import verify_open_log

LOG_SUFFIX = ".jsonl"
FIRST_LINE_BYTES = 1 << 16
DigestSource = Callable[[Path], Iterable[str]]  # log folder -> digests it needs kept
_DIGEST_SOURCES: list[DigestSource] = []


def register_digest_source(source: DigestSource) -> Callable[[], None]:
    """Have `kept_digests` (and so gc) keep the digests `source(log_folder)` names; returns
    a function that takes it back. It is called with the log folder locked exclusively, so it
    must not take that lock itself."""
    if source not in _DIGEST_SOURCES:
        _DIGEST_SOURCES.append(source)
    return lambda: _DIGEST_SOURCES.remove(source) if source in _DIGEST_SOURCES else None


def named_digests(value: Any) -> Iterator[str]:
    """Every digest anywhere in a receipt's evidence (or any JSON value)."""
    if isinstance(value, str):
        if DIGEST.fullmatch(value):
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from named_digests(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from named_digests(item)


def receipt_digests(receipt: EffectReceipt) -> Iterator[str]:
    return named_digests(receipt.evidence.as_record())


def logs_in(log_folder: Path) -> list[Path]:
    """The logs that share a folder's content store: every file with a head beside it, and
    every `*.jsonl` file that starts like a receipt log (other JSONL files are not logs)."""
    entries = os.listdir(log_folder)
    names = {
        name[: -len(HEAD_SUFFIX)]
        for name in entries
        if name.endswith(HEAD_SUFFIX) and len(name) > len(HEAD_SUFFIX)
    }
    names.update(
        name
        for name in entries
        if name.endswith(LOG_SUFFIX) and name not in names and _starts_like_a_log(log_folder / name)
    )
    return [log_folder / name for name in sorted(names)]


def _starts_like_a_log(path: Path) -> bool:
    """Whether the first line is a receipt (or cannot be told apart from one cheaply)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return True  # a symlink or worse where a log could be: let the check refuse it
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        start = os.read(fd, FIRST_LINE_BYTES).lstrip()
    finally:
        os.close(fd)
    line, newline, _ = start.partition(b"\n")
    if not line:
        return False
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return not newline  # a first line too long to read here is checked in full
    return isinstance(record, dict) and "receipt_id" in record


def kept_digests(log_folder: Path, folder_fd: int, state: Path | None = None) -> set[str]:
    """Every digest the folder's logs and the registered sources name. `folder_fd` is the log
    folder, held locked by the caller; a log that does not verify raises ReceiptLogError.
    `state`: the one log whose own folder is being collected (a log outside `.counterfoil/`
    shares its content store with no other)."""
    kept: set[str] = set()

    def keep(receipt: EffectReceipt) -> None:
        kept.update(receipt_digests(receipt))

    logs = logs_in(log_folder) if state is None else [state]
    for log in logs:
        try:
            mode = os.lstat(log).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise ReceiptLogError(f"{log.name} beside the log is not a regular file")
        fd = open_log(folder_fd, log, write=False)
        try:
            _, problem, _ = verify_open_log(fd, log, on_receipt=keep)
        finally:
            if fd is not None:
                os.close(fd)
        if problem is not None:
            raise ReceiptLogError(f"{log.name} does not verify ({problem})")
    own = log_folder if state is None else own_folder(state)
    for source in _DIGEST_SOURCES:
        kept.update(source(own))
    return kept


@dataclass
class GarbageReport:
    removed: list[str] = field(default_factory=list)
    kept: int = 0
    skipped: list[str] = field(default_factory=list)  # names gc leaves alone, and why


def collect_garbage(log: Path, lock_timeout: float = LOCK_TIMEOUT_SECONDS) -> GarbageReport:
    """Remove the objects nothing names and the temporary files and holds of processes that
    ended, all under the log folder's exclusive lock."""
    report = GarbageReport()
    with locked_log(log, write=True, timeout=lock_timeout, create=False):
        folder = os.open(log.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        own = None
        try:
            shared = shares_folder(log)
            kept = kept_digests(log.parent, folder, None if shared else log)
            if not shared:  # the log's own folder, locked as its writers lock it
                own = open_private_folder(folder, own_folder(log).name, create=False)
                if own is None:
                    return report
                lock(own, exclusive=True, timeout=lock_timeout)
            held, stale = held_names(folder if own is None else own)
            report.removed.extend(stale)
            report.kept = len(kept)
            objects = open_private_folder(
                folder if own is None else own, OBJECTS_FOLDER, create=False
            )
        finally:
            os.close(folder)
            if own is not None:
                os.close(own)
        if objects is None:
            return report
        try:
            for name in sorted(os.listdir(objects)):
                if name in kept or name in held:
                    continue
                if DIGEST.fullmatch(name) or is_temporary_object(name):
                    _remove(objects, name, report)
        finally:
            os.close(objects)
    return report


def _remove(objects: int, name: str, report: GarbageReport) -> None:
    try:
        mode = os.lstat(name, dir_fd=objects).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        report.skipped.append(f"{OBJECTS_FOLDER}/{name} is not a regular file")
        return
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=objects)
        report.removed.append(name)

"""The runs' folders beside the receipt log: `<own folder>/sessions/<run-id>/`, in the log's
own folder (`.counterfoil/` for the default log; see `receipts.own_folder`).

Each holds `checkpoint.json` (replaced atomically: a temporary file, fsync, rename, fsync of
the folder), `intents/<call-id>.json` (one per approved effect, durable before it runs) and
`lock`, held by the one process running or resuming the run. The gate hides the whole folder
from the agent (`ReceiptStore.guards`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Self

from ..files.files import OwnedDescriptor, closed_after, open_folder_path, write_all
from ..receipts.content import regular_file_sha256
from ..receipts.hold import SESSIONS_FOLDER
from ..receipts.own_folder import own_folder
from .intent_seal import seal
from .record import CheckpointRefused, LogPosition, SessionRecord, load_record

CHECKPOINT_FILE = "checkpoint.json"
INTENTS_FOLDER = "intents"
LOCK_FILE = "lock"
PROMPT_CACHE_PREFIX = "prompt-cache-"
MAX_CHECKPOINT_BYTES = 256 << 20
LISTING_GRACE_SECONDS = 0.5  # a lock held this briefly is a listing looking, not a run
RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


class RunLocked(CheckpointRefused):
    """Another process is running or resuming this run."""


@dataclass(frozen=True)
class StoredRun:
    """One run's folder as listed: its record, or the sentence that refuses it."""

    run_id: str
    record: SessionRecord | None
    problem: str | None
    live: bool  # its lock is held: a process is running it now
    modified: float


class RunLock(OwnedDescriptor):
    """An exclusive, non-blocking lock on one run, released when the process ends."""

    def release(self) -> None:
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


class SessionStore:
    """The sessions of one receipt log."""

    def __init__(self, log_path: Path, own: Path | None = None) -> None:
        self.log_path = Path(log_path)
        self.own = own_folder(self.log_path) if own is None else own  # see `own_folder`
        self.folder = self.own / SESSIONS_FOLDER

    def run_folder(self, run_id: str) -> Path:
        if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
            raise CheckpointRefused(f"{run_id!r} is not a run id")
        return self.folder / run_id

    def has_run(self, run_id: str) -> bool:
        """Whether the run has a folder; CheckpointRefused for what cannot be a run id."""
        return (self.folder / self.run_folder(run_id).name).is_dir()

    def require_run(self, run_id: str, root: Path) -> None:
        """Refuse, naming the workspace `root`, a run id that names no run here."""
        if not self.has_run(run_id):
            raise CheckpointRefused(f"there is no run {run_id} in {root}")

    def lock_existing(self, run_id: str, root: Path) -> RunLock:
        """The lock of a run that is already here, to resume or fork it: `lock` alone would
        make a folder for a run id that names nothing."""
        self.require_run(run_id, root)
        return self.lock(run_id)

    # Writing

    def write(self, record: SessionRecord) -> None:
        """Replace the run's checkpoint with `record`, durably."""
        self.write_file(record.run_id, CHECKPOINT_FILE, record.to_bytes())

    def write_intent(self, run_id: str, call_id: str, intent: dict[str, Any]) -> None:
        """Write `intent` sealed and bound to this log's head and the run's checkpoint now
        (an intent written again keeps the binding it was first written with)."""
        sealed = seal(intent, self.binding(run_id))
        data = json.dumps(sealed, sort_keys=True).encode("utf-8") + b"\n"
        self.write_file(run_id, f"{INTENTS_FOLDER}/{_file_name(call_id)}.json", data)

    def write_file(self, run_id: str, relative: str, data: bytes) -> None:
        *folders, name = relative.split("/")
        with self._open_run(run_id, create=True, inside=folders) as folder:
            temporary = f".{name}.{secrets.token_hex(6)}.tmp"
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                0o600,
                dir_fd=folder,
            )
            try:
                write_all(fd, data)
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise
            os.close(fd)
            os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            os.fsync(folder)

    def write_prompt_cache(self, run_id: str, name: str, writer: Callable[[str], None]) -> None:
        """Let `writer(path)` write a KV cache file, fsync it and name it `name` atomically;
        older cache files of the run go."""
        folder_path = self.run_folder(run_id)
        with self._open_run(run_id, create=True) as folder:
            temporary = f".{secrets.token_hex(6)}.tmp.safetensors"
            try:
                writer(str(folder_path / temporary))
                fd = os.open(temporary, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
                with closed_after(fd):
                    os.fsync(fd)
                os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise
            os.fsync(folder)
            for old in os.listdir(folder):
                if old.startswith(PROMPT_CACHE_PREFIX) and old != name:
                    os.unlink(old, dir_fd=folder)

    def remove_checkpoint_and_caches(self, run_id: str) -> None:
        """Remove an ended run's checkpoint and prompt caches; its record, intents and
        branches stay."""
        with self._open_run(run_id, create=False) as folder:
            for name in os.listdir(folder):
                if name == CHECKPOINT_FILE or name.startswith(PROMPT_CACHE_PREFIX):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=folder)
            os.fsync(folder)

    def lock(self, run_id: str) -> RunLock:
        """Take the run's lock, or refuse: a run is resumed by one process at a time. A
        listing looks at the lock for an instant (shared), so that is waited out."""
        with self._open_run(run_id, create=True) as folder:
            fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=folder)
        deadline = time.monotonic() + LISTING_GRACE_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return RunLock(fd)
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                os.close(fd)
                raise RunLocked(
                    f"run {run_id} is already running or being resumed by another process"
                ) from None

    def binding(self, run_id: str) -> dict[str, Any]:
        """What an intent written now is bound to: this log, its head, the run's checkpoint."""
        position = LogPosition.of_log(self.log_path)
        try:
            checkpoint_id: str | None = self.load(run_id).checkpoint.checkpoint_id
        except CheckpointRefused:
            checkpoint_id = None
        return {
            "log": str(self.log_path),
            "log_position": asdict(position),
            "checkpoint_id": checkpoint_id,
        }

    # Reading

    def load(self, run_id: str) -> SessionRecord:
        """The run's checkpoint; one that names another run (a copied folder) is refused, so
        one run has one lock."""
        data = self.read_file(run_id, CHECKPOINT_FILE)
        if data is None:
            raise CheckpointRefused(f"run {run_id} has no checkpoint")
        record = load_record(data, run_id)
        if record.run_id != run_id:
            raise CheckpointRefused(
                f"the checkpoint in the folder of run {run_id} is of run {record.run_id} "
                "(a copy); it is not resumed"
            )
        return record

    def read_file(self, run_id: str, relative: str) -> bytes | None:
        *folders, name = relative.split("/")
        try:
            with self._open_run(run_id, create=False, inside=folders) as folder:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as error:  # a symlink (ELOOP), a folder on the way that is not one
            why = "a symlink" if error.errno == errno.ELOOP else error.strerror or str(error)
            raise CheckpointRefused(
                f"{relative} of run {run_id} is not a checkpoint file ({why})"
            ) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CHECKPOINT_BYTES:
                raise CheckpointRefused(f"{relative} of run {run_id} is not a checkpoint file")
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def file_sha256(self, run_id: str, name: str) -> str | None:
        """The SHA-256 of a regular file in the run's folder (never through a symlink), or
        None when it is not one."""
        try:
            with self._open_run(run_id, create=False) as folder:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except OSError:
            return None
        return regular_file_sha256(fd)

    def intents(self, run_id: str) -> list[tuple[str, bytes | None]]:
        """(file name, bytes) of each intent of the run, in name order; None for a file that
        is not a regular file of a sane size (a symlink, a folder)."""
        try:
            with self._open_run(run_id, create=False, inside=[INTENTS_FOLDER]) as folder:
                names = sorted(
                    name
                    for name in os.listdir(folder)
                    if name.endswith(".json") and not name.startswith(".")
                )
        except FileNotFoundError:
            return []
        found: list[tuple[str, bytes | None]] = []
        for name in names:
            try:
                data = self.read_file(run_id, f"{INTENTS_FOLDER}/{name}")
            except (CheckpointRefused, OSError):
                found.append((name, None))
                continue
            if data is not None:
                found.append((name, data))
        return found

    def run_ids(self) -> list[str]:
        try:
            names = os.listdir(self.folder)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(name for name in names if RUN_ID.fullmatch(name))

    def runs(self) -> list[StoredRun]:
        """Every run with a checkpoint, oldest first by its last write."""
        found = []
        for run_id in self.run_ids():
            path = self.folder / run_id / CHECKPOINT_FILE
            try:
                modified = os.lstat(path).st_mtime
            except OSError:
                continue
            try:
                record: SessionRecord | None = self.load(run_id)
                problem = None
            except CheckpointRefused as error:
                record, problem = None, str(error)
            found.append(StoredRun(run_id, record, problem, self.is_live(run_id), modified))
        return sorted(found, key=lambda run: run.modified)

    def is_live(self, run_id: str) -> bool:
        """Whether a process holds the run's lock; looked at shared, for an instant, and
        never made (listing creates nothing)."""
        try:
            with self._open_run(run_id, create=False) as folder:
                fd = os.open(LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)
        return False

    @contextlib.contextmanager
    def _open_run(
        self, run_id: str, *, create: bool, inside: list[str] | None = None
    ) -> Iterator[int]:
        """A descriptor on the run's folder (or one inside it), never through a symlink."""
        parts = [self.own.name, SESSIONS_FOLDER, self.run_folder(run_id).name, *(inside or [])]
        mode = 0o700 if create else None
        with closed_after(open_folder_path(self.own.parent, parts, create_mode=mode)) as fd:
            yield fd


def _file_name(call_id: str) -> str:
    if not RUN_ID.fullmatch(call_id):
        raise CheckpointRefused(f"{call_id!r} cannot name an intent")
    return call_id

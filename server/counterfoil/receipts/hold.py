"""Holds: what a process has put in the content store and may not yet have named in a receipt.

An effect stores its bytes before its receipt is written, and a command's output streams into
a temporary file while the command runs; `receipts gc` must not remove either in between. So
every name written into `objects/` (an object's digest, a temporary file) is first listed in a
hold file, `<log folder>/.holds/<pid>.<hex>`, that its process keeps locked while it is open.
A name is listed, and the object made, under the log folder's shared lock; gc takes that lock
exclusively, keeps every name in a hold that is still locked, and removes holds whose process
has ended. A store keeps one hold for as long as it is open.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from ..errors import AgentError
from .logfile import LOCK_TIMEOUT_SECONDS, lock

HOLDS_FOLDER = ".holds"
SESSIONS_FOLDER = "sessions"  # beside the log: one folder per run (see counterfoil.sessions)
MAX_HOLD_BYTES = 64 << 20
PRIVATE_FOLDER_MODE = 0o700
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def open_private_folder(parent: int, name: str, create: bool) -> int | None:
    """A folder of ours inside `parent` (never through a symlink), made or narrowed to its
    owner alone; None when it is absent and not to be created."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, PRIVATE_FOLDER_MODE, dir_fd=parent)
    try:
        fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise AgentError(f"content store is not a real folder: {error.strerror}") from None
    if create and os.fstat(fd).st_mode & 0o077:
        with contextlib.suppress(OSError):  # not ours to change: its files stay private anyway
            os.fchmod(fd, PRIVATE_FOLDER_MODE)
    return fd


def open_log_folder(log_folder: Path) -> int:
    """The log folder as a descriptor (never through a symlink), which every step into the
    content store starts from; a failure is the store's one precise error."""
    try:
        return os.open(log_folder, _DIRECTORY_FLAGS)
    except OSError as error:
        raise AgentError(f"content store: cannot open {log_folder}: {error.strerror}") from None


@contextlib.contextmanager
def shared_folder_lock(log_folder: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[int]:
    """The log folder, open and locked shared: writers of the content store hold this while
    they list a name and make it, so gc (which holds it exclusively) sees both or neither."""
    folder = open_log_folder(log_folder)
    try:
        lock(folder, exclusive=False, timeout=timeout)
        yield folder
    finally:
        os.close(folder)


class ObjectHold:
    """One process's list of the names it wrote into the content store, locked while open."""

    def __init__(self, log_folder: Path) -> None:
        self.log_folder = log_folder
        self._name = f"{os.getpid()}.{secrets.token_hex(8)}"
        self._fd: int | None = None
        self._closed = False
        self._lock = threading.Lock()

    def add(self, folder: int, name: str) -> None:
        """List `name` before it is made; `folder` is the log folder, held shared."""
        with self._lock:
            if self._closed:
                raise AgentError("content store: the receipt store was closed")
            try:
                if self._fd is None:
                    self._fd = self._create(folder)
                data = f"{name}\n".encode("ascii")
                if os.write(self._fd, data) != len(data):
                    raise OSError(28, "short write to the hold file")
            except OSError as error:
                raise AgentError(f"content store: could not hold {name}: {error}") from None

    def _create(self, folder: int) -> int:
        holds = open_private_folder(folder, HOLDS_FOLDER, create=True)
        assert holds is not None
        try:
            fd = os.open(
                self._name,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=holds,
            )
        finally:
            os.close(holds)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new, so no one else has it
        return fd

    def close(self) -> None:
        """Remove the hold (its names are then kept only if a receipt names them)."""
        with self._lock:
            self._closed = True
            fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            with contextlib.suppress(OSError):
                holds = os.open(self.log_folder / HOLDS_FOLDER, _DIRECTORY_FLAGS)
                try:
                    os.unlink(self._name, dir_fd=holds)
                finally:
                    os.close(holds)
        finally:
            os.close(fd)


def held_names(folder: int) -> tuple[set[str], list[str]]:
    """Every name listed in a hold whose process still has it locked, and the holds removed
    because no one does; call it with the log folder locked exclusively."""
    holds = open_private_folder(folder, HOLDS_FOLDER, create=False)
    if holds is None:
        return set(), []
    names: set[str] = set()
    removed: list[str] = []
    try:
        for entry in sorted(os.listdir(holds)):
            try:
                fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=holds)
            except OSError:
                continue  # gone meanwhile, or not a file gc understands: left alone
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    names.update(_read_names(fd))
                    continue
                os.unlink(entry, dir_fd=holds)
                removed.append(f"{HOLDS_FOLDER}/{entry}")
            finally:
                os.close(fd)
    finally:
        os.close(holds)
    return names, removed


def _read_names(fd: int) -> list[str]:
    chunks: list[bytes] = []
    size = 0
    while size < MAX_HOLD_BYTES and (chunk := os.read(fd, 1 << 20)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("ascii", "replace").split()

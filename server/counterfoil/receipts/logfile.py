"""The log file itself: opened only as a regular file in a real folder, locked with a
timeout, written completely or not at all.

Every open is non-blocking and never follows a symlink, so a FIFO, a device, a symlink or a
folder at the log's path is a clear error at once, never a hang.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..files.files import write_all
from .errors import ReceiptLogError
from .identity import PinnedLog

LOCK_TIMEOUT_SECONDS = 10.0
LOCK_POLL_SECONDS = 0.02
PRIVATE_MODE = 0o600  # the log and its head: their owner alone reads them


def _why(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "it is a symlink"
    return error.strerror or str(error)


def check_folder(path: Path) -> None:
    """The log's folder must be a real directory, not a symlink or a file in its place."""
    folder = path.parent
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        raise ReceiptLogError(f"the receipt log's folder {folder} does not exist") from None
    except OSError as error:
        raise ReceiptLogError(f"the receipt log's folder {folder}: {_why(error)}") from None
    if stat.S_ISLNK(mode):
        raise ReceiptLogError(f"the receipt log's folder {folder} is a symlink")
    if not stat.S_ISDIR(mode):
        raise ReceiptLogError(f"the receipt log's folder {folder} is not a directory")


def make_log_folder(path: Path) -> None:
    """Create the log's folder, private to its owner (an existing folder is left as it is:
    what the store writes into it is private anyway). A file where a folder must be is said in
    a sentence, not as the system's error number."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (FileExistsError, NotADirectoryError):
        blocking = next(
            (part for part in (path.parent, *path.parent.parents) if part.is_file()), path.parent
        )
        needed = "" if blocking == path.parent else f" (for {path.parent})"
        raise ReceiptLogError(
            f"{blocking} is a file where the receipt log needs a folder{needed}: move the file "
            "away, or set the receipt log elsewhere (receiptLog)"
        ) from None


def open_folder(path: Path) -> int | None:
    """A descriptor on the log's folder (never through a symlink); None when it is absent."""
    if not os.path.lexists(path.parent):
        return None
    check_folder(path)
    try:
        return os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise ReceiptLogError(f"the receipt log's folder: {_why(error)}") from None


def open_log(folder: int, path: Path, *, write: bool, create: bool = True) -> int | None:
    """A descriptor on the log inside `folder`, or None when it does not exist (and is not to
    be created)."""
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    flags |= (os.O_RDWR | os.O_APPEND) if write else os.O_RDONLY
    if write and create:
        flags |= os.O_CREAT
    try:
        fd = os.open(path.name, flags, PRIVATE_MODE, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ReceiptLogError(f"could not load receipt log {path}: {_why(error)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReceiptLogError(f"could not load receipt log {path}: not a regular file")
        if write and info.st_mode & 0o077:  # a log from before logs were private
            with contextlib.suppress(OSError):
                os.fchmod(fd, stat.S_IMODE(info.st_mode) & 0o700)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock(fd: int, *, exclusive: bool, timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
    """Take the log's lock, or say plainly that another process holds it."""
    operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, operation)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise ReceiptLogError(
                    f"the receipt log is locked by another process (waited {timeout:g} s)"
                ) from None
            time.sleep(LOCK_POLL_SECONDS)


@contextmanager
def locked_log(
    path: Path,
    *,
    write: bool,
    timeout: float = LOCK_TIMEOUT_SECONDS,
    create: bool = True,
    pinned: PinnedLog | None = None,
) -> Iterator[int | None]:
    """The log, opened while holding its lock: the lock is on the log's folder, so it also
    covers a log that does not exist yet and the head beside it. With `pinned`, the folder and
    the log must be the ones first seen (ReceiptLogError otherwise)."""
    folder = open_folder(path)
    if pinned is not None:
        pinned.check_folder(folder)
    if folder is None:
        if write:
            raise ReceiptLogError(f"the receipt log's folder {path.parent} does not exist")
        yield None
        return
    try:
        lock(folder, exclusive=write, timeout=timeout)
        fd = open_log(folder, path, write=write, create=create)
        try:
            if pinned is not None:
                pinned.check_log(fd)
            yield fd
        finally:
            if fd is not None:
                os.close(fd)
    finally:
        os.close(folder)


def append_durably(fd: int, data: bytes, start: int) -> None:
    """Append `data` at `start` (the log's length), durably; on any failure cut the log back
    to `start`, so a partial line never stays behind."""
    written = 0
    try:
        while written < len(data):
            count = os.write(fd, data[written:])
            if count <= 0:
                raise OSError(errno.ENOSPC, "no space left for the receipt")
            written += count
        os.fsync(fd)
    except OSError as error:
        try:
            os.ftruncate(fd, start)
            os.fsync(fd)
        except OSError:
            pass
        raise ReceiptLogError(f"could not write receipt: {error.strerror or error}") from None


def replace_atomically(path: Path, data: bytes) -> None:
    """Write a small file next to `path` and rename it into place: readers see the old or the
    new whole file, never a part. It is not fsynced: the log's own fsync is what makes a
    receipt count, and a file that lags after a power loss is rewritten by the next append."""
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        temporary = f".{path.name}.{os.getpid()}.tmp"
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
            PRIVATE_MODE,
            dir_fd=folder,
        )
        try:
            os.fchmod(fd, PRIVATE_MODE)  # a leftover temporary file keeps its old mode
            write_all(fd, data)
        finally:
            os.close(fd)
        os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.close(folder)


def read_small(path: Path, limit: int = 1 << 20) -> bytes | None:
    """A small side file (the head), never through a symlink; None when absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ReceiptLogError(f"could not read {path.name}: {_why(error)}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ReceiptLogError(f"could not read {path.name}: not a regular file")
        return os.read(fd, limit)
    finally:
        os.close(fd)

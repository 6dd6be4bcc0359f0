"""File access that never follows a symlink and never half-writes a file.

Every operation walks from the workspace root one directory at a time with O_NOFOLLOW and
works relative to the directory's file descriptor, so a symlink swapped in anywhere on the
path, parent directories included, is refused rather than followed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import AgentError

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _refusal(error: OSError) -> AgentError:
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        return AgentError("symlinks are not accessible")
    if error.errno == errno.ENOENT:
        return AgentError("path is not accessible")
    if error.errno == errno.ENAMETOOLONG:
        return AgentError("path is too long")
    return AgentError(f"path is not accessible: {error.strerror or error}")


@contextmanager
def open_directory(root: Path, parts: tuple[str, ...]) -> Iterator[int]:
    """Yield a descriptor of root/parts, refusing any symlink on the way."""
    try:
        fd = os.open(root, DIRECTORY_FLAGS)
    except OSError as error:
        raise _refusal(error) from None
    try:
        for part in parts:
            try:
                child = os.open(part, DIRECTORY_FLAGS, dir_fd=fd)
            except OSError as error:
                raise _refusal(error) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def read_regular_file(directory_fd: int, name: str, limit: int) -> bytes:
    """The file's bytes; FIFOs, devices and sockets are refused without blocking."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=directory_fd)
    except OSError as error:
        if error.errno == errno.ENXIO:  # a socket, or a FIFO with no writer
            raise AgentError("path is not a regular file") from None
        raise _refusal(error) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AgentError("path is not a regular file")
        if info.st_size > limit:
            raise AgentError(f"file exceeds {limit} bytes")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(limit + 1 - total, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise AgentError(f"file exceeds {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def entry_mode(directory_fd: int, name: str) -> int | None:
    """The lstat mode of `name`, or None when it does not exist."""
    try:
        return os.stat(name, dir_fd=directory_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _refusal(error) from None


def replace_file(directory_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Write `data` to a temporary sibling, then rename it over `name` in one step.

    `mode` keeps an existing file's permission bits; None gives a new file the usual
    0o666 less the umask. The temporary file is removed on any failure.
    """
    temporary = f".{name}.counterfoil-{secrets.token_hex(6)}.tmp"
    fd = os.open(
        temporary,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o666 if mode is None else 0o600,
        dir_fd=directory_fd,
    )
    try:
        try:
            if mode is not None:
                os.fchmod(fd, stat.S_IMODE(mode))
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=directory_fd)
        except OSError:
            pass
        raise
    os.fsync(directory_fd)


def remove_file(directory_fd: int, name: str) -> None:
    """Remove `name` (never following a symlink: unlink removes the entry itself), durably."""
    os.unlink(name, dir_fd=directory_fd)
    os.fsync(directory_fd)

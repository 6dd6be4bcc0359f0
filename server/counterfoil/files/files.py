"""File access that never follows a symlink and never half-writes a file.

Every operation walks from the workspace root one directory at a time with O_NOFOLLOW and
works relative to the directory's file descriptor, so a symlink swapped in anywhere on the
path, parent directories included, is refused rather than followed. A regular file with more
than one hard link is refused too: its other name may lie outside the root or be protected.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ..errors import AgentError
from .paths import is_temporary_name, temporary_name

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# A temporary file lives for one write; one this old was left by a killed process.
STALE_TEMPORARY_SECONDS = 10 * 60

FileIdentity = tuple[int, int]


def file_identity(info: os.stat_result) -> FileIdentity:
    """Device and inode: the same file under any name, link or letter case."""
    return (info.st_dev, info.st_ino)


def refuse_hard_links(info: os.stat_result) -> None:
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise AgentError("file has other hard links")


def _refusal(error: OSError) -> AgentError:
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        return AgentError("symlinks are not accessible")
    if error.errno == errno.ENOENT:
        return AgentError("path is not accessible")
    if error.errno == errno.ENAMETOOLONG:
        return AgentError("path is too long")
    return AgentError(f"path is not accessible: {error.strerror or error}")


@contextmanager
def closed_after(fd: int) -> Iterator[int]:
    """`fd` for a with block, closed however the block ends, so no descriptor leaks."""
    try:
        yield fd
    finally:
        os.close(fd)


class OwnedDescriptor:
    """A descriptor its owner lets go of on more than one path (finished, discarded,
    released): the first closes it and the rest find it closed, so a number the system has
    since given to another file is never closed."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def open_folder_path(root: Path, parts: Iterable[str], *, create_mode: int | None = None) -> int:
    """A descriptor on root/parts, opened one folder at a time with O_NOFOLLOW, so that no
    symlink on the way is followed (a path string would follow them all). `create_mode`
    (not None) makes a missing folder with that mode; one made at the same moment by another
    process is used. The caller closes the descriptor; OSError as raised."""
    fd = os.open(root, DIRECTORY_FLAGS)
    for part in parts:
        with closed_after(fd) as folder:  # the parent goes, whether or not the child opens
            try:
                fd = os.open(part, DIRECTORY_FLAGS, dir_fd=folder)
            except FileNotFoundError:
                if create_mode is None:
                    raise
                with suppress(FileExistsError):
                    os.mkdir(part, create_mode, dir_fd=folder)
                fd = os.open(part, DIRECTORY_FLAGS, dir_fd=folder)
    return fd


@contextmanager
def open_directory(root: Path, parts: tuple[str, ...]) -> Iterator[int]:
    """Yield a descriptor of root/parts, refusing any symlink on the way."""
    try:
        fd = open_folder_path(root, parts)
    except OSError as error:
        raise _refusal(error) from None
    with closed_after(fd):
        yield fd


def read_regular_file(
    directory_fd: int,
    name: str,
    limit: int,
    forbidden: Collection[FileIdentity] = (),
    *,
    refuse_nul: bool = False,
) -> bytes:
    """The file's bytes; FIFOs, devices, sockets and hard-linked files are refused without
    blocking, and so is any file in `forbidden`, whatever name it was opened by.
    `refuse_nul`: a file with a NUL byte is refused at the first block that holds one (a
    search reads no further into a binary file)."""
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
        if file_identity(info) in forbidden:
            raise AgentError("path is not accessible")
        refuse_hard_links(info)
        if info.st_size > limit:
            raise AgentError(f"file exceeds {limit} bytes")
        chunks: list[bytes] = []
        total = 0
        block = 1 << 16 if refuse_nul else 1 << 20
        while True:
            chunk = os.read(fd, min(limit + 1 - total, block))
            if not chunk:
                break
            if refuse_nul and b"\0" in chunk:
                raise AgentError("file is not text")
            chunks.append(chunk)
            total += len(chunk)
            block = 1 << 20
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


def directory_entries(directory_fd: int) -> Iterator[tuple[str, os.stat_result]]:
    """Each entry of an open directory, by name and lstat, in name order."""
    for name in sorted(os.listdir(directory_fd)):
        try:
            yield name, os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue


def remove_stale_temporaries(directory_fd: int) -> None:
    """Remove temporary files that a killed write left in this directory.

    Only regular files with our temporary name and no other hard link, untouched for
    STALE_TEMPORARY_SECONDS, so a write still in progress in another process is spared.
    """
    cutoff = time.time() - STALE_TEMPORARY_SECONDS
    for name in filter(is_temporary_name, os.listdir(directory_fd)):
        try:
            info = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_mtime < cutoff:
                os.unlink(name, dir_fd=directory_fd)
        except OSError:
            continue


def _kept_permissions(fd: int, mode: int, original: os.stat_result) -> int:
    """Give the new file the original's owner and group where possible; the permission bits
    of `mode` to set, less setuid and setgid when the owner or group could not be kept."""
    try:
        os.fchown(fd, original.st_uid, original.st_gid)
    except OSError:
        try:
            os.fchown(fd, -1, original.st_gid)
        except OSError:
            pass
    bits = stat.S_IMODE(mode)
    current = os.fstat(fd)
    if (current.st_uid, current.st_gid) != (original.st_uid, original.st_gid):
        bits &= ~(stat.S_ISUID | stat.S_ISGID)
    return bits


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data`: `os.write` may write fewer bytes than it is given."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace_file(directory_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Write `data` to a temporary sibling, then rename it over `name` in one step.

    `mode` (not None) says the file exists: it keeps its permission bits, owner and group;
    None gives a new file the usual 0o666 less the umask. The temporary file has a short
    name, so any legal `name` can be replaced, and is removed on any failure; stale ones
    from killed writes in this directory go first.
    """
    remove_stale_temporaries(directory_fd)
    original = None
    if mode is not None:
        original = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    temporary = temporary_name()
    fd = os.open(
        temporary,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o666 if mode is None else 0o600,
        dir_fd=directory_fd,
    )
    try:
        try:
            write_all(fd, data)
            if original is not None and mode is not None:  # after writing, which clears setuid
                os.fchmod(fd, _kept_permissions(fd, mode, original))
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

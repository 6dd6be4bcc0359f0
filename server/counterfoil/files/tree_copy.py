"""Copying a folder and taking its inventory without ever following a link.

Both walk one directory descriptor at a time (O_NOFOLLOW), so a link swapped in after a check is
met as a link, not followed. A regular file is cloned where the file system offers
copy-on-write (Linux FICLONE), else copied extent by extent, so that its holes stay holes; new
files get no executable bit unless asked.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError
from .files import DIRECTORY_FLAGS, READ_FLAGS, open_directory, read_regular_file

FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
MAX_DIGESTED_BYTES = 64 * 1024 * 1024
# A folder this deep is an entry of its own ("other"), not walked: a tree a program made
# thousands of folders deep is then a change to see, not a RecursionError.
MAX_SNAPSHOT_DEPTH = 256
COPY_STEP_BYTES = 64 << 20

# relative path -> ("file", sha256) | ("dir", "") | ("link", "") | ("other", "")
Snapshot = dict[str, tuple[str, str]]


class LinkRefused(AgentError):
    """A link (or a special file) where the copy allows none; `path` is relative."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(f"{path} is not a regular file or a folder ({kind})")
        self.path = path


@dataclass
class CopyCount:
    """How the files of a copy were made: blocks shared (copy-on-write) or bytes copied."""

    cloned: int = 0
    copied: int = 0


def copy_tree(
    source: Path,
    destination: Path,
    *,
    keep_links: bool = False,
    keep_modes: bool = False,
    skip: Callable[[str], bool] = lambda _path: False,
) -> CopyCount:
    """Copy `source` into the new folder `destination`. A symlink is recreated as the same
    link with `keep_links` (never followed), else refused with LinkRefused; special files are
    always refused. `keep_modes` keeps permission bits; otherwise files are 0o644. Relative
    paths for which `skip(path)` is true are left out (a folder with all it holds)."""
    destination.mkdir()
    count = CopyCount()
    fd = os.open(source, DIRECTORY_FLAGS)
    try:
        _copy_folder(fd, destination, "", _CopyOptions(keep_links, keep_modes, skip), count)
    finally:
        os.close(fd)
    return count


@dataclass(frozen=True)
class _CopyOptions:
    keep_links: bool
    keep_modes: bool
    skip: Callable[[str], bool]


def _copy_folder(
    source_fd: int, destination: Path, prefix: str, options: _CopyOptions, count: CopyCount
) -> None:
    for name in sorted(os.listdir(source_fd)):
        shown = f"{prefix}{name}"
        if options.skip(shown):
            continue
        mode = os.stat(name, dir_fd=source_fd, follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            child = os.open(name, DIRECTORY_FLAGS, dir_fd=source_fd)
            try:
                (destination / name).mkdir()
                _copy_folder(child, destination / name, f"{shown}/", options, count)
            finally:
                os.close(child)
        elif stat.S_ISREG(mode):
            kept = mode if options.keep_modes else 0o644
            if _copy_file(source_fd, name, destination / name, kept):
                count.cloned += 1
            else:
                count.copied += 1
        elif stat.S_ISLNK(mode) and options.keep_links:
            os.symlink(os.readlink(name, dir_fd=source_fd), destination / name)
        else:
            raise LinkRefused(shown, "a symlink" if stat.S_ISLNK(mode) else "a special file")


def _copy_file(source_fd: int, name: str, target: Path, mode: int) -> bool:
    """Copy one file; True when its blocks were cloned rather than copied."""
    fd = os.open(name, READ_FLAGS, dir_fd=source_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LinkRefused(name, "changed while it was copied")
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            cloned = copy_bytes(fd, out, info.st_size)
            os.fchmod(out, stat.S_IMODE(mode))
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return cloned


def copy_bytes(reading: int, writing: int, size: int) -> bool:
    """`size` bytes from `reading` into the empty `writing`: the blocks shared (copy-on-write,
    True) where the file system can, else each data extent alone (SEEK_DATA/SEEK_HOLE, in the
    kernel where it can), so that a hole stays a hole."""
    if _clone(reading, writing):
        return True
    offset = 0
    while offset < size:
        try:
            start = os.lseek(reading, offset, os.SEEK_DATA)
            end = os.lseek(reading, start, os.SEEK_HOLE)
        except OSError as error:
            if error.errno == errno.ENXIO:
                break  # only a hole is left
            if error.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                raise
            start, end = offset, size  # no extents to ask for: copy it all
        _copy_range(reading, writing, start, min(end, size) - start)
        offset = end
    os.ftruncate(writing, size)
    return False


def _copy_range(reading: int, writing: int, offset: int, count: int) -> None:
    done, in_kernel = 0, hasattr(os, "copy_file_range")
    while done < count:
        step = min(COPY_STEP_BYTES, count - done)
        if in_kernel:
            try:
                copied = os.copy_file_range(reading, writing, step, offset + done, offset + done)
            except OSError as error:
                if error.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                    raise
                in_kernel = False
                continue
        else:
            data = os.pread(reading, min(step, 1 << 20), offset + done)
            copied = os.pwrite(writing, data, offset + done) if data else 0
        if copied == 0:
            return  # the file got shorter while it was copied
        done += copied


def _clone(source: int, target: int) -> bool:
    """Share the blocks (copy-on-write) where the file system can; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    import fcntl

    try:
        fcntl.ioctl(target, FICLONE, source)
    except OSError:
        return False
    return True


def read_relative(root: Path, path: str, limit: int = MAX_DIGESTED_BYTES) -> bytes:
    """The bytes of the regular file at `root/path` (a relative POSIX path), reached without
    following any link."""
    parts = tuple(path.split("/"))
    with open_directory(root, parts[:-1]) as directory:
        return read_regular_file(directory, parts[-1], limit)


def snapshot(root: Path, skip: Callable[[str], bool] = lambda _path: False) -> Snapshot:
    """Every entry under `root` by kind, each regular file with its SHA-256; paths for which
    `skip(path)` is true are left out (a folder with all it holds); a folder
    MAX_SNAPSHOT_DEPTH deep is `("other", …)`, what it holds left out."""
    entries: Snapshot = {}
    fd = os.open(root, DIRECTORY_FLAGS)
    try:
        _walk(fd, "", entries, skip, 1)
    finally:
        os.close(fd)
    return entries


def _walk(
    directory: int, prefix: str, entries: Snapshot, skip: Callable[[str], bool], depth: int
) -> None:
    for name in sorted(os.listdir(directory)):
        path = f"{prefix}{name}"
        if skip(path):
            continue
        try:
            mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(mode) and depth >= MAX_SNAPSHOT_DEPTH:
            entries[path] = ("other", f"a folder nested more than {MAX_SNAPSHOT_DEPTH} deep")
        elif stat.S_ISDIR(mode):
            entries[path] = ("dir", "")
            child = os.open(name, DIRECTORY_FLAGS, dir_fd=directory)
            try:
                _walk(child, f"{path}/", entries, skip, depth + 1)
            finally:
                os.close(child)
        elif stat.S_ISREG(mode):
            try:
                data = read_regular_file(directory, name, MAX_DIGESTED_BYTES)
                entries[path] = ("file", hashlib.sha256(data).hexdigest())
            except AgentError as error:
                entries[path] = ("other", str(error))
        else:
            entries[path] = ("link" if stat.S_ISLNK(mode) else "other", "")


def remove_tree(path: Path) -> None:
    """Remove the folder `path` and all it holds, following no link and without recursion:
    each subfolder's own folders are first moved up into `path`, so a tree a program made
    thousands of folders deep (which `shutil.rmtree` recurses into until it fails) goes too.
    Folders a program left unwritable are made writable first. Nothing there: nothing done."""
    try:
        top = os.open(path, DIRECTORY_FLAGS)
    except FileNotFoundError:
        return
    moved = 0
    try:
        _writable(top)
        while names := os.listdir(top):
            for name in names:
                if not stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=top)
                    continue
                folder = os.open(name, DIRECTORY_FLAGS, dir_fd=top)
                try:
                    _writable(folder)
                    for inner in os.listdir(folder):
                        mode = os.stat(inner, dir_fd=folder, follow_symlinks=False).st_mode
                        if not stat.S_ISDIR(mode):
                            os.unlink(inner, dir_fd=folder)
                            continue
                        while True:  # up into `path`, under a name nothing there has
                            moved += 1
                            try:
                                os.rename(
                                    inner, f".removing-{moved}", src_dir_fd=folder, dst_dir_fd=top
                                )
                                break
                            except OSError as error:
                                if error.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                                    raise
                finally:
                    os.close(folder)
                os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    os.rmdir(path)


def _writable(folder: int) -> None:
    try:
        os.fchmod(folder, 0o700)
    except OSError:
        pass  # not ours to change: removing what it holds says why

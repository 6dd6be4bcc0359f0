"""A folder's listing (each name with its lstat key), and the listings of a folder's subfolders
taken a few at a time on other threads.

Listing is what a walk of an unchanged tree costs: one `getdents` per folder and one `lstat`
per entry, none of which can be skipped soundly (a file rewritten in place changes its own
stat, never its folder's). Both calls release the GIL, so while the walk records one folder,
`TreeLimits.walk_threads` threads list the next ones (a window of them, so a folder of 10,000
subfolders holds a bounded number of descriptors). The walk itself stays on one thread: the
snapshot is written by it alone, in the same order as with no threads.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Generator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from typing import TYPE_CHECKING

from ...gate.files import DIRECTORY_FLAGS

if TYPE_CHECKING:
    from .snapshot import StatKey

Opened = (
    tuple[int, list["StatKey"]] | None
)  # a subfolder's descriptor and listing; None: unreadable
AHEAD_PER_THREAD = 4


def default_threads() -> int:
    """Lister threads for a machine: none below 4 CPUs (on 2 busy cores they cost a quarter
    more CPU for no shorter walk, `bench/tree_changes.py`), else up to 4."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return 0 if cpus < 4 else min(4, cpus // 2)


def stat_key(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_size, info.st_mtime_ns, info.st_ino


def folder_listing(fd: int) -> list[StatKey]:
    """Each name in the folder with its lstat key, in the order the folder lists them."""
    with os.scandir(fd) as children:
        try:  # the hot loop: a snapshot of a big tree is mostly this comprehension
            return [
                (
                    child.name,
                    (info := child.stat(follow_symlinks=False)).st_size,
                    info.st_mtime_ns,
                    info.st_ino,
                    info.st_mode,
                    info.st_ctime_ns,
                )
                for child in children
            ]
        except OSError:
            pass
    listing: list[StatKey] = []  # a name went away between the listing and its stat
    with os.scandir(fd) as children:
        for child in children:
            try:
                info = child.stat(follow_symlinks=False)
            except OSError:
                continue
            listing.append((child.name, *stat_key(info), info.st_mode, info.st_ctime_ns))
    return listing


def open_listed(parent: int, name: str) -> Opened:
    """The subfolder `name` opened (never through a symlink) and listed."""
    try:
        fd = os.open(name, DIRECTORY_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        return fd, folder_listing(fd)
    except BaseException:
        os.close(fd)
        raise


class Lister:
    """Lists subfolders ahead of the walk on `threads` threads (none: in the walk's own)."""

    def __init__(self, threads: int) -> None:
        threads = default_threads() if threads < 0 else threads
        self.pool = ThreadPoolExecutor(threads, "tree-walk") if threads > 0 else None
        self.ahead = max(1, threads * AHEAD_PER_THREAD)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, parent: int, name: str) -> Future[Opened]:
        assert self.pool is not None
        return self.pool.submit(open_listed, parent, name)

    def subfolders(
        self, parent: int, names: tuple[str, ...] | list[str]
    ) -> Generator[tuple[str, Opened], None, None]:
        """Each of `names` with its descriptor and listing, in order; a descriptor is closed
        when the next name is asked for (or the iterator is closed)."""
        if self.pool is None or len(names) < 2:
            for name in names:
                opened = open_listed(parent, name)
                try:
                    yield name, opened
                finally:
                    if opened is not None:
                        os.close(opened[0])
            return
        pending = iter(names)
        window: deque[tuple[str, Future[Opened]]] = deque(
            (name, self._submit(parent, name)) for name in islice(pending, self.ahead)
        )
        try:
            while window:
                name, job = window.popleft()
                for more in islice(pending, 1):
                    window.append((more, self._submit(parent, more)))
                opened = job.result()
                try:
                    yield name, opened
                finally:
                    if opened is not None:
                        os.close(opened[0])
        finally:
            for _, job in window:
                if not job.cancel():
                    left = job.result()
                    if left is not None:
                        os.close(left[0])

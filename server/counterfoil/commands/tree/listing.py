"""A folder's listing (each name with its lstat key), and the listings of a folder's subfolders
taken ahead of the walk.

Listing is what a walk of an unchanged tree costs: one `lstat` per entry, none of which can be
skipped soundly (a file rewritten in place changes its own stat, never its folder's), and one
`getdents` per folder. The `getdents` can be: a folder whose own mtime, ctime and inode are
those it had when last listed, and were already out of the racy window then, holds the same
names (making, removing or renaming a name moves its mtime and ctime, and putting the mtime
back moves the ctime), so its names are taken from the last listing and each `lstat`ed again
(`listing_by_names`; a name gone after all falls back to a fresh listing).

The loops have a C twin (`_listing.c`, built by `setup.py` where a compiler is at hand), with
the same results at about half the cost per name: it stats a batch of subfolders on
`TreeLimits.walk_threads` threads of its own with the GIL released, and gives back a folder's
last listing itself when no key changed. Without it the Python loops below run, and
`walk_threads` Python threads list the next subfolders while the walk records one (a window of
them, so a folder of 10,000 subfolders holds a bounded number of descriptors). Either way the
walk itself stays on one thread: the snapshot is written by it alone, in the same order.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Generator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from typing import Any

from ...files.files import DIRECTORY_FLAGS

try:  # the C twin of the loops below, built by setup.py where a compiler is at hand
    from . import _listing  # type: ignore[attr-defined]
except ImportError:
    _listing = None
compiled: Any = _listing  # the C module, or None where it was not built

StatKey = tuple[str, int, int, int, int, int]  # name, size, mtime_ns, inode, mode, ctime_ns
Opened = tuple[int, list[StatKey]] | None  # a subfolder's descriptor and listing; None: unreadable
AHEAD_PER_THREAD = 4


def default_threads() -> int:
    """Lister threads for a machine. In C, one per CPU up to 4. In Python, none below 4 CPUs
    (on 2 busy cores they cost a quarter more CPU for no shorter walk), else up to 4; both
    measured by `bench/tree_changes.py`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if compiled is not None:
        return min(4, cpus)
    return 0 if cpus < 4 else min(4, cpus // 2)


def stat_key(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_size, info.st_mtime_ns, info.st_ino


def keyed(name: str, info: os.stat_result) -> StatKey:
    """`name` with its lstat key."""
    return name, info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode, info.st_ctime_ns


def python_folder_listing(fd: int) -> list[StatKey]:
    """Each name in the folder with its lstat key, in the order the folder lists them."""
    with os.scandir(fd) as children:
        try:  # the hot loop: a snapshot of a big tree is mostly this comprehension
            return [keyed(child.name, child.stat(follow_symlinks=False)) for child in children]
        except OSError:
            pass
    listing: list[StatKey] = []  # a name went away between the listing and its stat
    with os.scandir(fd) as children:
        for child in children:
            try:
                info = child.stat(follow_symlinks=False)
            except OSError:
                continue
            listing.append(keyed(child.name, info))
    return listing


def python_listing_by_names(fd: int, previous: list[StatKey]) -> list[StatKey] | None:
    """The folder's listing when its names are known to be those of `previous`: each
    `lstat`ed, in that order; None when one of them is gone."""
    lstat = os.stat
    try:  # the hot loop of an unchanged tree: one lstat per name and one tuple
        return [keyed(key[0], lstat(key[0], dir_fd=fd, follow_symlinks=False)) for key in previous]
    except OSError:
        return None


COMPILED = compiled is not None
BATCH = 64  # subfolders stat'ed by one call into C at the most


def held_at_most() -> int:
    """How many subfolder descriptors the C batches may hold at once, over every level of the
    walk: a quarter of the process's limit, up to 256 (a deep tree of wide folders must not
    run out, or a folder would be taken for unreadable)."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 16
    return 256 if limit == resource.RLIM_INFINITY else max(1, min(256, limit // 4))


def _raised(result: list[StatKey] | OSError | None) -> list[StatKey] | None:
    if isinstance(result, OSError):
        raise result
    return result


def folder_listing(fd: int) -> list[StatKey]:
    """Each name in the folder with its lstat key, in the order the folder lists them."""
    if compiled is None:
        return python_folder_listing(fd)
    listing = _raised(compiled.listings([(fd, None)], 1)[0])
    assert listing is not None  # a folder read afresh always has a listing
    return listing


def listing_by_names(fd: int, previous: list[StatKey]) -> list[StatKey]:
    """The folder's listing when its names are known to be those of its `previous` listing:
    each `lstat`ed, in that order (`previous` itself, in C, when no key changed; a listing
    afresh when one of them is gone)."""
    if compiled is None:
        listing = python_listing_by_names(fd, previous)
    else:
        listing = _raised(compiled.listings([(fd, previous)], 1)[0])
    return listing if listing is not None else folder_listing(fd)


def listing_changes(
    earlier: list[StatKey], listing: list[StatKey]
) -> tuple[list[StatKey], set[str]]:
    """The keys of `listing` that `earlier` does not hold, and the names whose key in `earlier`
    is not in `listing` (gone, or changed). A listing taken by `earlier`'s names holds the same
    names in the same order, and in C its unchanged keys are `earlier`'s own: those are told
    apart by identity, without a set of either."""
    if len(earlier) == len(listing):
        changed: list[StatKey] = []
        for was, key in zip(earlier, listing):
            if was is key:
                continue
            if was[0] != key[0]:
                break
            if was != key:
                changed.append(key)
        else:
            return changed, {key[0] for key in changed}
    known = set(earlier)
    return [key for key in listing if key not in known], {
        key[0] for key in known.difference(listing)
    }


# A subfolder's own stat (mtime_ns, ctime_ns, inode) and last listing, whose names it holds
# while that stat is unchanged; None: list it.
Known = tuple[tuple[int, int, int], list[StatKey]] | None
# An opened subfolder and the last listing whose names to lstat (None: list it).
Folder = tuple[int, list[StatKey] | None]


def open_folder(parent: int, name: str, known: Known = None) -> Folder | None:
    """The subfolder `name` opened (never through a symlink), with its `known` listing when it
    still has the own stat that listing was known with; None when it cannot be opened."""
    try:
        fd = os.open(name, DIRECTORY_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        if known is not None:
            info = os.fstat(fd)
            if (info.st_mtime_ns, info.st_ctime_ns, info.st_ino) == known[0]:
                return fd, known[1]
        return fd, None
    except BaseException:
        os.close(fd)
        raise


def open_listed(parent: int, name: str, known: Known = None) -> Opened:
    """The subfolder `name` opened and listed (from its `known` names where they still hold)."""
    folder = open_folder(parent, name, known)
    if folder is None:
        return None
    fd, previous = folder
    try:
        return fd, folder_listing(fd) if previous is None else listing_by_names(fd, previous)
    except BaseException:
        os.close(fd)
        raise


def _closing(name: str, opened: Opened) -> Generator[tuple[str, Opened], None, None]:
    """`opened` yielded, its descriptor closed when the walk asks for the next one."""
    try:
        yield name, opened
    finally:
        if opened is not None:
            os.close(opened[0])


class Lister:
    """Lists subfolders ahead of the walk: in C, a batch at a time on `threads` threads of its
    own (at least one); else on `threads` Python threads (none: in the walk's own)."""

    def __init__(self, threads: int) -> None:
        self.threads = default_threads() if threads < 0 else threads
        self.held = 0  # subfolder descriptors the C batches hold now
        self.held_at_most = held_at_most()
        python_threads = self.threads if compiled is None else 0
        self.pool = ThreadPoolExecutor(python_threads, "tree-walk") if python_threads else None
        self.ahead = max(1, python_threads * AHEAD_PER_THREAD)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, parent: int, name: str, known: Known) -> Future[Opened]:
        assert self.pool is not None
        return self.pool.submit(open_listed, parent, name, known)

    def subfolders(
        self, parent: int, names: list[tuple[str, Known]]
    ) -> Generator[tuple[str, Opened], None, None]:
        """Each of `names` (with its known names, if any) with its descriptor and listing, in
        order; a descriptor is closed when the next name is asked for (or the iterator is
        closed)."""
        if compiled is not None:
            start = 0
            while start < len(names):
                size = max(1, min(BATCH, self.held_at_most - self.held))
                yield from self._batch(parent, names[start : start + size])
                start += size
            return
        if self.pool is None or len(names) < 2:
            for name, known in names:
                yield from _closing(name, open_listed(parent, name, known))
            return
        pending = iter(names)
        window: deque[tuple[str, Future[Opened]]] = deque(
            (name, self._submit(parent, name, known)) for name, known in islice(pending, self.ahead)
        )
        try:
            while window:
                name, job = window.popleft()
                for more, known in islice(pending, 1):
                    window.append((more, self._submit(parent, more, known)))
                yield from _closing(name, job.result())
        finally:
            for _, job in window:
                if not job.cancel():
                    left = job.result()
                    if left is not None:
                        os.close(left[0])

    def _batch(
        self, parent: int, names: list[tuple[str, Known]]
    ) -> Generator[tuple[str, Opened], None, None]:
        """`names` opened, stat'ed in one call into C, then yielded in order; a folder C could
        not read raises in its turn, as it would listed alone."""
        assert compiled is not None
        folders: list[Folder | None] = []

        def close(index: int) -> None:
            folder = folders[index]
            if folder is not None:
                folders[index] = None
                self.held -= 1
                os.close(folder[0])

        try:
            for name, known in names:
                folders.append(open_folder(parent, name, known))
                self.held += folders[-1] is not None
            listed = iter(compiled.listings([f for f in folders if f is not None], self.threads))
            for index, ((name, _), folder) in enumerate(zip(names, folders)):
                if folder is None:
                    yield name, None
                    continue
                listing = _raised(next(listed))
                if listing is None:  # a known name is gone: read the folder afresh
                    listing = folder_listing(folder[0])
                try:
                    yield name, (folder[0], listing)
                finally:
                    close(index)
        finally:
            for index in range(len(folders)):
                close(index)

"""Writes into the folders a snapshot leaves out (`.venv`, `node_modules`, caches, gitignored
build folders): counted per folder on the receipt, not listed.

Each left-out folder is walked whole by stat alone (nothing read, no symlink followed), and
its entries' keys compared with the last snapshot's. Not the folder's mtime: a file rewritten
in place (a `sitecustomize.py` in site-packages, its mtime put back) changes neither its
folder's mtime nor its listing, only its own stat (its ctime). A folder's own key is its mode
and inode alone (its mtime moves with every name made in it, which is counted as that name).
The walk stops at `TreeLimits.max_left_out_entries` entries per snapshot, at the snapshot's
time limit, at 200 folders deep, or at a folder it cannot open; a folder it did not finish is
reported unchecked, never as unchanged. A rewrite in
the same clock tick as the before-snapshot's stat, its mtime put back, can pass unseen (the
content is never read to settle it, as the snapshot's racy rule does for walked files).
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass

from ...files.files import DIRECTORY_FLAGS
from ...receipt_fields import LeftOutChangeRecord
from .listing import folder_listing

Keys = dict[str, tuple[int, ...]]
MAX_DEPTH = 200


@dataclass(frozen=True)
class LeftOutFolder:
    """One left-out folder as a snapshot saw it: why it was left out, and each entry's stat
    key by path inside it ("" the folder itself); `keys` is None when it was not walked whole
    (`unchecked` says why)."""

    why: str
    keys: Keys | None
    unchecked: str | None = None


@dataclass(frozen=True)
class LeftOutChange:
    """How many entries of a left-out folder differ between two snapshots (None: unknown)."""

    path: str
    why: str
    entries: int | None
    unchecked: str | None = None

    def evidence(self) -> LeftOutChangeRecord:
        return LeftOutChangeRecord(
            path=self.path, why=self.why, entries=self.entries, unchecked=self.unchecked
        )

    def line(self) -> str:
        if self.entries is None:
            return f"  [{self.path} (left out: {self.why}) not checked: {self.unchecked}]"
        plural = "entry" if self.entries == 1 else "entries"
        return f"  [{self.entries} {plural} changed in {self.path} (left out: {self.why})]"


def stat_left_out(
    parent: int, name: str, why: str, budget: int, deadline: float
) -> tuple[LeftOutFolder, int]:
    """The folder `name` in `parent`, walked by stat up to `budget` entries; and the entries
    it took."""
    keys: Keys = {}
    try:
        top = os.open(name, DIRECTORY_FLAGS, dir_fd=parent)
    except OSError as error:
        return LeftOutFolder(why, None, f"could not be opened ({error.strerror})"), 0
    try:
        info = os.fstat(top)
        keys[""] = (info.st_mode, info.st_ino)
        unchecked = _stat_folder(top, "", keys, _Bounds(budget, deadline), 0)
    finally:
        os.close(top)
    if unchecked is not None:
        return LeftOutFolder(why, None, unchecked), len(keys)
    return LeftOutFolder(why, keys), len(keys)


@dataclass(frozen=True)
class _Bounds:
    entries: int
    deadline: float


def _stat_folder(fd: int, prefix: str, keys: Keys, bounds: _Bounds, depth: int) -> str | None:
    """Each entry of one folder, and of its subfolders, into `keys`; why it stopped short."""
    if depth > MAX_DEPTH:
        return f"deeper than {MAX_DEPTH} folders"
    if time.monotonic() > bounds.deadline:
        return "the snapshot ran out of time"
    try:
        listing = folder_listing(fd)
    except OSError:
        return f"{prefix or 'the folder'} could not be listed"
    if len(keys) + len(listing) > bounds.entries:
        return f"over {bounds.entries} entries left out in all"
    folders: list[tuple[str, str]] = []
    for key in listing:
        path = f"{prefix}/{key[0]}" if prefix else key[0]
        if stat.S_ISDIR(key[4]):
            keys[path] = (key[4], key[3])
            folders.append((key[0], path))
        else:
            keys[path] = key[1:]
    for name, path in folders:
        try:
            child = os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
        except OSError:
            return f"{path} could not be opened"
        try:
            stopped = _stat_folder(child, path, keys, bounds, depth + 1)
        finally:
            os.close(child)
        if stopped is not None:
            return stopped
    return None


def left_out_changes(
    before: dict[str, LeftOutFolder] | None, after: dict[str, LeftOutFolder] | None
) -> tuple[LeftOutChange, ...]:
    """Per left-out folder whose entries differ (or could not be compared): how many, by
    path. A folder made or removed counts all its entries; nothing is compared when either
    snapshot did not look at left-out folders."""
    if before is None or after is None:
        return ()
    found: list[LeftOutChange] = []
    for path in sorted(before.keys() | after.keys()):
        was, now = before.get(path), after.get(path)
        why = (now or was or LeftOutFolder("", None)).why
        unchecked = next(
            (folder.unchecked for folder in (was, now) if folder and folder.keys is None), None
        )
        if unchecked is not None:
            found.append(LeftOutChange(path, why, None, unchecked))
            continue
        old = {} if was is None or was.keys is None else was.keys
        new = {} if now is None or now.keys is None else now.keys
        if old != new:
            differ = {name for name, _ in old.items() ^ new.items()}
            found.append(LeftOutChange(path, why, len(differ)))
    return tuple(found)

"""What a snapshot of the tree under the root holds: every file's stat, and its digest where
it may be read; and how one file is read for it.

Reading never follows a symlink (one is recorded by the digest of its target text, which is
never opened): each folder is opened with O_NOFOLLOW relative to its parent's descriptor, and a
file is checked to be the one its stat saw. A FIFO, socket or device is recorded by its stat
alone and never opened, and so is a protected file, a file with other hard links and a file
over `max_hash_bytes`. The walk itself is `walk.take_snapshot`.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ...errors import AgentError
from ...files.files import READ_FLAGS, open_directory
from .ignore import IgnoreRule
from .left_out import LeftOutFolder
from .listing import StatKey

FILE, SYMLINK, OTHER, FOLDER = "file", "symlink", "other", "folder"
RACY_NANOSECONDS = 100_000_000  # a fine clock's stamps this close to a snapshot are re-read
SECOND_NANOSECONDS = 1_000_000_000
COARSE_TICK_NANOSECONDS = 2 * SECOND_NANOSECONDS  # FAT's mtime; HFS+, ext4's 128-byte inodes: 1 s
CHUNK_BYTES = 1 << 20
NOT_READ_PROTECTED = "protected"
NOT_READ_LINKED = "has other hard links"
NOT_READ_SPECIAL = "not a regular file"
SETTLED_NOTES = frozenset({NOT_READ_PROTECTED, NOT_READ_LINKED, NOT_READ_SPECIAL})
UNSETTLED = 1 << 63  # a folder record's newest mtime when an entry must be read again

KeepBytes = Callable[[bytes], None]


def latest_ns(stamp_ns: int) -> int:
    """The latest time a file-system timestamp may stand for. A whole-second one may come from a
    coarse clock (HFS+, FAT, ext4 with 128-byte inodes, some network and FUSE file systems),
    truncated from any time in the tick after it: a change later in that tick leaves it as it
    is. So it stands for the end of the coarsest such tick; a finer one stands for itself."""
    if stamp_ns % SECOND_NANOSECONDS == 0:
        return stamp_ns + COARSE_TICK_NANOSECONDS - 1
    return stamp_ns


def changed_ns(mtime_ns: int, ctime_ns: int) -> int:
    """When an entry last changed, as far as its stat can tell: what git's "racily clean" rule
    compares with a snapshot's start (see `Snapshot.settled_ns`)."""
    return max(latest_ns(mtime_ns), latest_ns(ctime_ns))


@dataclass(frozen=True)
class TreeLimits:
    """How much one snapshot (and one command's record) may cost."""

    max_entries: int = 200_000
    max_seconds: float = 30.0
    max_hash_bytes: int = 64 * 1024 * 1024
    max_kept_file_bytes: int = 10 * 1024 * 1024
    max_kept_bytes: int = 256 * 1024 * 1024
    max_left_out_entries: int = 100_000
    walk_threads: int = -1  # threads that list folders ahead of the walk (0: none; -1: by CPUs)
    max_listed_changes: int = 1000
    max_observed_changes: int = 20


class Entry(NamedTuple):
    """One path's lstat facts and digest (None: not read, `note` says why); a tuple, since a
    snapshot makes one per file.

    The ctime is part of the stat: a process can put a file's mtime back (`os.utime`) after
    rewriting it in place with the same size, but never its ctime."""

    kind: str
    size: int
    mtime_ns: int
    inode: int
    mode: int
    ctime_ns: int
    digest: str | None
    note: str | None = None

    def same_stat(self, other: Entry) -> bool:
        return self[1:6] == other[1:6]

    @property
    def changed_ns(self) -> int:
        """When the entry last changed, as far as its stat can tell (`changed_ns`)."""
        return changed_ns(self.mtime_ns, self.ctime_ns)


FolderKey = tuple[int, int, int]  # a folder's own mtime_ns, ctime_ns and inode


class FolderRecord(NamedTuple):
    """One folder as a walk left it: its listing, the rules it was walked with, and what it
    gave (entries, subfolders walked into, counts of what was left out)."""

    listing: list[StatKey]
    inherited: list[IgnoreRule]
    own_rules: list[IgnoreRule]
    gitignore: StatKey | None
    entries: dict[str, Entry]
    subfolders: tuple[str, ...]
    left_out: dict[str, str]  # name: why (counted, not listed)
    newest_ns: int  # reusable only once this is out of the racy window
    own: FolderKey | None = None  # the folder's own stat when listed (None: not known)


_serials = itertools.count(1)


@dataclass
class Snapshot:
    """Entries by path (relative, `/`-separated); what was left out, counted by reason.

    `fresh` lists the paths recorded anew rather than taken unchanged from the snapshot
    numbered `base`, so a comparison with that one looks at those alone."""

    entries: dict[str, Entry] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    incomplete: str | None = None
    taken_ns: int = 0
    kept_bytes: int = 0
    folders: dict[str, FolderRecord] = field(default_factory=dict)
    fresh: list[str] = field(default_factory=list)
    base: int | None = None
    root: StatKey | None = None  # the root folder's own stat (its name ".")
    left_out_folders: dict[str, LeftOutFolder] | None = None  # None: not looked at
    serial: int = field(default_factory=lambda: next(_serials))

    @property
    def settled_ns(self) -> int:
        """What this snapshot read of an entry holds while the entry's stat is unchanged only
        when the entry last changed before this time (`changed_ns`), as git's "racily clean"
        rule has it: a change in the same clock tick as the snapshot's start may leave the
        stat as it was, so anything newer is read again at the next walk or comparison."""
        return self.taken_ns - RACY_NANOSECONDS

    def count_ignored(self, reason: str) -> None:
        self.ignored[reason] = self.ignored.get(reason, 0) + 1


@dataclass(frozen=True)
class TreeRules:
    """What a snapshot leaves out besides caches and `.gitignore`: protected patterns and the
    receipt log's own files (`guarded(path)`; for the walk, `guarded_paths`: relative to the
    root, casefolded)."""

    protected_patterns: tuple[str, ...] = ()
    guarded: Callable[[Path], bool] = lambda path: False
    guarded_paths: frozenset[str] = frozenset()


def guarded_paths(root: Path, paths: tuple[Path, ...]) -> frozenset[str]:
    """`paths` that lie under `root`, relative and casefolded, as `TreeRules.guarded_paths`."""
    inside: set[str] = set()
    for path in paths:
        try:
            relative = path.relative_to(root).as_posix().casefold()
        except ValueError:
            continue
        if relative != ".":
            inside.add(relative)
    return frozenset(inside)


def hash_entry(
    root: Path, path: str, entry: Entry, limits: TreeLimits, keep: KeepBytes | None
) -> Entry:
    """`entry` with its digest, read now through descriptors that never follow a link (an
    entry that is not a plain, singly linked file, or that changed kind, keeps its note)."""
    if entry.digest is not None or entry.note is not None or entry.kind == OTHER:
        return entry
    parts = tuple(path.split("/"))
    try:
        with open_directory(root, parts[:-1]) as directory:
            if entry.kind == SYMLINK:
                return entry._replace(digest=symlink_digest(directory, parts[-1]))
            info = os.stat(parts[-1], dir_fd=directory, follow_symlinks=False)
            digest, note = digest_file(directory, parts[-1], info, limits, keep)
    except (AgentError, OSError):
        return entry._replace(note="could not be read")
    return entry._replace(digest=digest, note=note)


def digest_file(
    directory: int, name: str, info: os.stat_result, limits: TreeLimits, keep: KeepBytes | None
) -> tuple[str | None, str | None]:
    """(digest, note) of a regular file opened without following links and checked to be the
    one stat saw; small enough files are handed to `keep` (the content store) as read."""
    if info.st_size > limits.max_hash_bytes:
        return None, f"over {limits.max_hash_bytes} bytes, not hashed"
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=directory)
    except OSError:
        return None, "could not be opened"
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or opened.st_ino != info.st_ino:
            return None, "changed while read"
        hasher = hashlib.sha256()
        kept: list[bytes] | None = (
            [] if keep and info.st_size <= limits.max_kept_file_bytes else None
        )
        total = 0
        while chunk := os.read(fd, CHUNK_BYTES):
            total += len(chunk)
            if total > limits.max_hash_bytes:
                return None, f"over {limits.max_hash_bytes} bytes, not hashed"
            hasher.update(chunk)
            if kept is not None:
                if total > limits.max_kept_file_bytes:
                    kept = None
                else:
                    kept.append(chunk)
        if kept is not None and keep is not None:
            keep(b"".join(kept))
        return hasher.hexdigest(), None
    except OSError:
        return None, "could not be read"
    finally:
        os.close(fd)


def symlink_digest(directory: int, name: str) -> str | None:
    try:
        return hashlib.sha256(os.fsencode(os.readlink(name, dir_fd=directory))).hexdigest()
    except OSError:
        return None

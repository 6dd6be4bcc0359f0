"""A snapshot of the tree under the root: every file's stat, and its digest where it may be read.

The walk opens each folder with O_NOFOLLOW relative to its parent's descriptor and never
follows a symlink (one is recorded by the digest of its target text, which is never opened).
A FIFO, socket or device is recorded by its stat alone and never opened, and so is a protected
file, a file with other hard links and a file over `max_hash_bytes`. The stat cache: an entry
whose size, mtime_ns, inode and mode match the previous snapshot's keeps its digest unread,
unless its mtime was too close to when that snapshot was taken to trust (as git's "racy" rule).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ...errors import AgentError
from ...files import DIRECTORY_FLAGS, READ_FLAGS, open_directory
from ...paths import is_temporary_name, protected_walk_matcher
from .ignore import (
    CACHE_NAMES,
    GITIGNORE,
    MAX_GITIGNORE_BYTES,
    IgnoreRule,
    is_ignored,
    parse_gitignore,
)

FILE, SYMLINK, OTHER = "file", "symlink", "other"
RACY_NANOSECONDS = 100_000_000  # mtimes this close to a snapshot are hashed again next time
CHUNK_BYTES = 1 << 20
NOT_READ_PROTECTED = "protected"
NOT_READ_LINKED = "has other hard links"
NOT_READ_SPECIAL = "not a regular file"

KeepBytes = Callable[[bytes], None]


@dataclass(frozen=True)
class TreeLimits:
    """How much one snapshot (and one command's record) may cost."""

    max_entries: int = 200_000
    max_seconds: float = 30.0
    max_hash_bytes: int = 64 * 1024 * 1024
    max_kept_file_bytes: int = 10 * 1024 * 1024
    max_kept_bytes: int = 256 * 1024 * 1024
    max_listed_changes: int = 1000
    max_observed_changes: int = 20


class Entry(NamedTuple):
    """One path's lstat facts and digest (None: not read, `note` says why); a tuple, since a
    snapshot makes one per file."""

    kind: str
    size: int
    mtime_ns: int
    inode: int
    mode: int
    digest: str | None
    note: str | None = None

    def same_stat(self, other: Entry) -> bool:
        return self[1:5] == other[1:5]


@dataclass
class Snapshot:
    """Entries by path (relative, `/`-separated); what was left out, counted by reason."""

    entries: dict[str, Entry] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    incomplete: str | None = None
    taken_ns: int = 0
    kept_bytes: int = 0

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
                return entry._replace(digest=_symlink_digest(directory, parts[-1]))
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


def _symlink_digest(directory: int, name: str) -> str | None:
    try:
        return hashlib.sha256(os.fsencode(os.readlink(name, dir_fd=directory))).hexdigest()
    except OSError:
        return None


class _Walk:
    def __init__(
        self,
        root: Path,
        rules: TreeRules,
        limits: TreeLimits,
        previous: Snapshot | None,
        keep: KeepBytes | None,
        hash_files: bool,
    ) -> None:
        self.root = root
        self.rules = rules
        self.limits = limits
        self.previous = previous.entries if previous is not None else {}
        self.trust_before = (previous.taken_ns - RACY_NANOSECONDS) if previous else 0
        self.keep = keep
        self.hash_files = hash_files
        self.snapshot = Snapshot(taken_ns=time.time_ns())
        self.protected = protected_walk_matcher(rules.protected_patterns)
        self.deadline = time.monotonic() + limits.max_seconds

    def run(self) -> Snapshot:
        fd = os.open(self.root, DIRECTORY_FLAGS)
        try:
            self._folder(fd, "", [])
        finally:
            os.close(fd)
        return self.snapshot

    def _stop(self, reason: str) -> None:
        if self.snapshot.incomplete is None:
            self.snapshot.incomplete = reason

    def _folder(self, fd: int, prefix: str, inherited: list[IgnoreRule]) -> None:
        rules = inherited + self._gitignore(fd, prefix)
        snapshot, previous, entries = self.snapshot, self.previous, self.snapshot.entries
        trusted, cap = self.trust_before, self.limits.max_entries
        with os.scandir(fd) as listing:
            for child in listing:  # the hot loop: a snapshot of a big tree is mostly this
                if snapshot.incomplete is not None:
                    return
                path = prefix + child.name
                try:
                    info = child.stat(follow_symlinks=False)
                except OSError:
                    continue
                known = previous.get(path)
                if known is not None:
                    if (
                        known[1:5] == (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)
                        and known.digest is not None
                        and info.st_mtime_ns < trusted
                        and len(entries) < cap
                    ):
                        entries[path] = known  # the stat cache: unchanged, the same entry
                        continue
                    if not stat.S_ISDIR(info.st_mode):
                        # Recorded last time, so it passed these rules then (a `.gitignore`
                        # changed since can only make it reported, never hidden).
                        protected = known.note == NOT_READ_PROTECTED
                        self._record(fd, child.name, path, info, protected=protected)
                        continue
                self._new_child(fd, child.name, path, info, rules)

    def _new_child(
        self, fd: int, name: str, path: str, info: os.stat_result, rules: list[IgnoreRule]
    ) -> None:
        folder = stat.S_ISDIR(info.st_mode)
        reason = self._left_out(name, path, folder, rules)
        if reason is not None and (reason != NOT_READ_PROTECTED or folder):
            self.snapshot.count_ignored(reason)
        elif folder:
            self._descend(fd, name, path, rules)
        else:
            self._record(fd, name, path, info, protected=reason is not None)

    def _descend(self, fd: int, name: str, path: str, rules: list[IgnoreRule]) -> None:
        try:
            child = os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
        except OSError:
            self.snapshot.count_ignored("unreadable folder")
            return
        try:
            self._folder(child, path + "/", rules)
        finally:
            os.close(child)

    def _left_out(self, name: str, path: str, folder: bool, rules: list[IgnoreRule]) -> str | None:
        if folder and name in CACHE_NAMES:
            return "cache"
        if name.endswith(".pyc") and not folder:
            return "cache"
        if is_temporary_name(name):
            return "temporary"
        if self.protected(path.split("/")):
            return NOT_READ_PROTECTED
        if path.casefold() in self.rules.guarded_paths:
            return "receipt log"
        if rules and is_ignored(rules, path, folder):
            return "gitignore"
        return None

    def _gitignore(self, fd: int, prefix: str) -> list[IgnoreRule]:
        try:
            ignore = os.open(GITIGNORE, READ_FLAGS, dir_fd=fd)
        except OSError:
            return []
        try:
            if not stat.S_ISREG(os.fstat(ignore).st_mode):
                return []
            text = os.read(ignore, MAX_GITIGNORE_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return []
        finally:
            os.close(ignore)
        return parse_gitignore(text, prefix.rstrip("/"))

    def _record(
        self, fd: int, name: str, path: str, info: os.stat_result, *, protected: bool
    ) -> None:
        snapshot = self.snapshot
        if len(snapshot.entries) >= self.limits.max_entries:
            self._stop(f"more than {self.limits.max_entries} entries")
            return
        if len(snapshot.entries) % 1024 == 0 and time.monotonic() > self.deadline:
            self._stop(f"took more than {self.limits.max_seconds:g} s")
            return
        mode = info.st_mode
        kind = FILE if stat.S_ISREG(mode) else SYMLINK if stat.S_ISLNK(mode) else OTHER
        digest: str | None = None
        note: str | None = None
        if protected:
            note = NOT_READ_PROTECTED
        elif kind == OTHER:
            note = NOT_READ_SPECIAL
        elif kind == FILE and info.st_nlink > 1:
            note = NOT_READ_LINKED
        else:
            known = self.previous.get(path)
            if (
                known is not None
                and known.digest is not None
                and known[1:5] == (info.st_size, info.st_mtime_ns, info.st_ino, mode)
                and info.st_mtime_ns < self.trust_before
            ):
                digest = known.digest
            elif kind == SYMLINK:
                digest = _symlink_digest(fd, name)
            elif self.hash_files:
                digest, note = digest_file(fd, name, info, self.limits, self._keeper())
        snapshot.entries[path] = Entry(
            kind, info.st_size, info.st_mtime_ns, info.st_ino, mode, digest, note
        )

    def _keeper(self) -> KeepBytes | None:
        if self.keep is None or self.snapshot.kept_bytes >= self.limits.max_kept_bytes:
            return None
        keep = self.keep

        def counted(data: bytes) -> None:
            self.snapshot.kept_bytes += len(data)
            keep(data)

        return counted


def take_snapshot(
    root: Path,
    rules: TreeRules = TreeRules(),
    limits: TreeLimits = TreeLimits(),
    *,
    previous: Snapshot | None = None,
    keep: KeepBytes | None = None,
    hash_files: bool = True,
) -> Snapshot:
    """The tree under `root` now; digests of unchanged entries come from `previous`.

    `keep` receives the bytes of each file read (up to the limits), so the content store holds
    what a later revert puts back. `hash_files=False` records stat alone (for a comparison
    that hashes only what changed, see `changes.compare`)."""
    return _Walk(root, rules, limits, previous, keep, hash_files).run()

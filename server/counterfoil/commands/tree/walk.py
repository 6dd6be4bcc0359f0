"""The walk that takes a snapshot, with its stat cache.

An entry whose size, mtime_ns, inode, mode and ctime_ns match the previous snapshot's keeps
its digest unread, unless its mtime or ctime, at the file system's granularity, was not older
than when that snapshot was taken (git's "racily clean" rule, `Snapshot.settled_ns`). A whole
folder whose listing (names and stat keys, in order) and inherited rules
equal the last walk's is taken whole from its `FolderRecord`: one list comparison instead of
one per entry; in a folder whose listing changed, only the names whose key changed are looked
at, and a `.gitignore` whose stat is unchanged is not read again. A folder whose own stat is
unchanged since it was listed is not listed again, only its names `lstat`ed (`listing.py`).
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import closing
from pathlib import Path

from ...files.files import DIRECTORY_FLAGS, READ_FLAGS
from ...files.paths import is_temporary_name, protected_walk_matcher
from .ignore import (
    CACHE_NAMES,
    GIT_FOLDER,
    GITIGNORE,
    MAX_GITIGNORE_BYTES,
    RECORD,
    SKIP,
    WALK,
    IgnoreRule,
    in_git_folder,
    is_ignored,
    parse_gitignore,
)
from .left_out import stat_left_out
from .listing import (
    Known,
    Lister,
    StatKey,
    folder_listing,
    listing_by_names,
    listing_changes,
    stat_key,
)
from .snapshot import (
    FILE,
    NOT_READ_LINKED,
    NOT_READ_PROTECTED,
    NOT_READ_SPECIAL,
    OTHER,
    SETTLED_NOTES,
    SYMLINK,
    UNSETTLED,
    Entry,
    FolderKey,
    FolderRecord,
    KeepBytes,
    Snapshot,
    TreeLimits,
    TreeRules,
    changed_ns,
    digest_file,
    symlink_digest,
)

GUARDED = "receipt log"


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
        self.records = previous.folders if previous is not None else {}
        self.trust_before = previous.settled_ns if previous is not None else 0
        self.keep = keep
        self.hash_files = hash_files
        self.snapshot = Snapshot(
            taken_ns=time.time_ns(), base=None if previous is None else previous.serial
        )
        self.snapshot.left_out_folders = {}
        self.left_out_budget = limits.max_left_out_entries
        self.protected = protected_walk_matcher(rules.protected_patterns)
        self.deadline = time.monotonic() + limits.max_seconds
        self.lister = Lister(limits.walk_threads)
        self.settled_before = self.snapshot.settled_ns

    def run(self) -> Snapshot:
        fd = os.open(self.root, DIRECTORY_FLAGS)
        try:
            info = os.fstat(fd)
            self.snapshot.root = (".", *stat_key(info), info.st_mode, info.st_ctime_ns)
            own = (info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
            known = self._known("", own)
            listing = folder_listing(fd) if known is None else listing_by_names(fd, known[1])
            self._folder(fd, "", [], listing, own)
        finally:
            os.close(fd)
            self.lister.close()
        return self.snapshot

    def _stop(self, reason: str) -> None:
        if self.snapshot.incomplete is None:
            self.snapshot.incomplete = reason

    def _known(self, prefix: str, own: FolderKey) -> Known:
        """The last listing of the folder `prefix` when its own stat says its names are still
        those (that stat unchanged, and settled when that listing was read); else None."""
        record = self.records.get(prefix)
        if record is None or record.own != own:
            return None
        return own, record.listing

    def _settled(self, own: FolderKey) -> FolderKey | None:
        """`own` as a record keeps it: only when it is out of the racy window now, so a change
        made after this listing cannot leave it as it is."""
        return own if changed_ns(own[0], own[1]) < self.settled_before else None

    def _folder(
        self,
        fd: int,
        prefix: str,
        inherited: list[IgnoreRule],
        listing: list[StatKey],
        own: FolderKey,
    ) -> None:
        if time.monotonic() > self.deadline:
            self._stop(f"took more than {self.limits.max_seconds:g} s")
        if self.snapshot.incomplete is not None:
            return
        record = self.records.get(prefix)
        trusted = (
            record is not None
            and record.newest_ns < self.trust_before
            and record.inherited == inherited
        )
        if trusted and record is not None and record.listing == listing:
            self._reuse(fd, prefix, record, own)  # the stat cache for a whole folder
        else:
            self._walk_listing(fd, prefix, listing, own, inherited, record if trusted else None)

    def _reuse(self, fd: int, prefix: str, record: FolderRecord, own: FolderKey) -> None:
        """An unchanged folder: its entries, counts and rules as they were; only its
        subfolders are walked again."""
        snapshot = self.snapshot
        if len(snapshot.entries) + len(record.entries) > self.limits.max_entries:
            self._stop(f"more than {self.limits.max_entries} entries")
            return
        snapshot.entries.update(record.entries)
        if record.own != own:
            record = record._replace(own=self._settled(own))
        snapshot.folders[prefix] = record
        for reason in record.left_out.values():
            snapshot.count_ignored(reason)
        if record.left_out:
            self._stat_left_out(fd, prefix, record.listing, record.left_out)
        rules = record.inherited + record.own_rules
        self._descend(fd, prefix, record.subfolders, rules, record.listing)

    def _walk_listing(
        self,
        fd: int,
        prefix: str,
        listing: list[StatKey],
        own: FolderKey,
        inherited: list[IgnoreRule],
        record: FolderRecord | None,
    ) -> None:
        """A folder whose listing changed: what `record` (trusted, else None) says of the
        names whose stat key is the same is kept; the others are looked at one by one."""
        own_rules = self._gitignore(fd, listing, prefix, record)
        rules = inherited + own_rules
        snapshot = self.snapshot
        entries: dict[str, Entry] = {}
        left_out: dict[str, str] = {}
        subfolders: list[str] = []
        newest = 0
        todo = listing
        if record is not None and record.own_rules == own_rules:
            todo, gone = listing_changes(record.listing, listing)
            entries = dict(record.entries)
            for name in gone:
                entries.pop(prefix + name, None)
            left_out = {name: why for name, why in record.left_out.items() if name not in gone}
            subfolders = [name for name in record.subfolders if name not in gone]
            newest = record.newest_ns
            if len(snapshot.entries) + len(entries) > self.limits.max_entries:
                self._stop(f"more than {self.limits.max_entries} entries")
                return
            snapshot.entries.update(entries)
        fresh = self._look_at(fd, prefix, todo, rules, entries, left_out, subfolders)
        if fresh is None:
            return
        for reason in left_out.values():
            snapshot.count_ignored(reason)
        if left_out:
            self._stat_left_out(fd, prefix, listing, left_out)
        gitignore = next((key for key in listing if key[0] == GITIGNORE), None)
        newest = max(newest, _newest_settled(fresh))
        snapshot.folders[prefix] = FolderRecord(
            listing,
            inherited,
            own_rules,
            gitignore,
            entries,
            tuple(subfolders),
            left_out,
            newest,
            self._settled(own),
        )
        self._descend(fd, prefix, subfolders, rules, listing)

    def _look_at(
        self,
        fd: int,
        prefix: str,
        keys: list[StatKey],
        rules: list[IgnoreRule],
        entries: dict[str, Entry],
        left_out: dict[str, str],
        subfolders: list[str],
    ) -> list[Entry] | None:
        """Each of `keys` recorded, left out or walked into; the entries made (None: the
        snapshot stopped)."""
        snapshot, previous = self.snapshot, self.previous
        trusted, cap = self.trust_before, self.limits.max_entries
        made: list[Entry] = []
        for key in keys:
            if snapshot.incomplete is not None:
                return None
            name, mode = key[0], key[4]
            path = prefix + name
            known = previous.get(path)
            folder = stat.S_ISDIR(mode)
            if known is not None and not folder:
                if (
                    known[1:6] == key[1:]
                    and known.digest is not None
                    and changed_ns(key[2], key[5]) < trusted
                    and len(snapshot.entries) < cap
                ):
                    snapshot.entries[path] = entries[path] = known  # unchanged: the same entry
                    made.append(known)
                    continue
                # Recorded last time, so it passed these rules then (a `.gitignore` changed
                # since can only make it reported, never hidden).
                protected = known.note == NOT_READ_PROTECTED
                reason: str | None = NOT_READ_PROTECTED if protected else None
            else:
                reason = self._left_out(name, path, folder, rules)
                if reason == SKIP:
                    continue
                if reason is not None and (reason != NOT_READ_PROTECTED or folder):
                    left_out[name] = reason
                    continue
                if folder:
                    subfolders.append(name)
                    continue
            entry = self._record(fd, name, path, protected=reason is not None)
            if entry is not None:
                entries[path] = entry
                made.append(entry)
        return made

    def _stat_left_out(
        self, fd: int, prefix: str, listing: list[StatKey], left_out: dict[str, str]
    ) -> None:
        """The folders among `left_out` (but the receipt log's) walked by stat, so writes into
        them are counted (`left_out.py`)."""
        folders = self.snapshot.left_out_folders
        assert folders is not None
        for key in listing:
            why = left_out.get(key[0])
            if why is None or why == GUARDED or not stat.S_ISDIR(key[4]):
                continue
            folder, used = stat_left_out(fd, key[0], why, self.left_out_budget, self.deadline)
            self.left_out_budget = max(0, self.left_out_budget - used)
            folders[prefix + key[0]] = folder

    def _descend(
        self,
        fd: int,
        prefix: str,
        names: tuple[str, ...] | list[str],
        rules: list[IgnoreRule],
        listing: list[StatKey],
    ) -> None:
        """Each subfolder walked, listed ahead on the lister's threads (from the names it had
        when its own stat, in `listing`, is unchanged)."""
        if not names:
            return
        wanted = set(names)
        owns = {key[0]: (key[2], key[5], key[3]) for key in listing if key[0] in wanted}
        todo = [
            (name, self._known(prefix + name + "/", owns[name]) if name in owns else None)
            for name in names
        ]
        with closing(self.lister.subfolders(fd, todo)) as listed:
            for name, opened in listed:
                if self.snapshot.incomplete is not None:
                    return
                if opened is None:
                    self.snapshot.count_ignored("unreadable folder")
                    continue
                own = owns.get(name)
                if own is None:  # not in the listing: its stat as opened
                    info = os.fstat(opened[0])
                    own = (info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
                self._folder(opened[0], prefix + name + "/", rules, opened[1], own)

    def _left_out(self, name: str, path: str, folder: bool, rules: list[IgnoreRule]) -> str | None:
        if GIT_FOLDER in path.casefold():
            part = in_git_folder(path.split("/"), folder)
            if part is not None:
                return None if part == WALK else NOT_READ_PROTECTED if part == RECORD else SKIP
        if folder and name in CACHE_NAMES:
            return "cache"
        if name.endswith(".pyc") and not folder:
            return "cache"
        if is_temporary_name(name):
            return "temporary"
        if self.protected(path.split("/")):
            return NOT_READ_PROTECTED
        if path.casefold() in self.rules.guarded_paths:
            return GUARDED
        if rules and is_ignored(rules, path, folder):
            return "gitignore"
        return None

    def _gitignore(
        self, fd: int, listing: list[StatKey], prefix: str, record: FolderRecord | None
    ) -> list[IgnoreRule]:
        """The folder's own rules: none without a `.gitignore`, last walk's while its stat
        is unchanged, else read and parsed now."""
        key = next((key for key in listing if key[0] == GITIGNORE), None)
        if key is None:
            return []
        if (
            record is not None
            and record.gitignore == key
            and changed_ns(key[2], key[5]) < self.trust_before
        ):
            return record.own_rules
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

    def _record(self, fd: int, name: str, path: str, *, protected: bool) -> Entry | None:
        """A new or changed entry, stat again now (None: gone, or over the limits)."""
        snapshot = self.snapshot
        if len(snapshot.entries) >= self.limits.max_entries:
            self._stop(f"more than {self.limits.max_entries} entries")
            return None
        if len(snapshot.fresh) % 1024 == 1023 and time.monotonic() > self.deadline:
            self._stop(f"took more than {self.limits.max_seconds:g} s")
            return None
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
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
                and known[1:6] == (*stat_key(info), mode, info.st_ctime_ns)
                and changed_ns(info.st_mtime_ns, info.st_ctime_ns) < self.trust_before
            ):
                digest = known.digest
            elif kind == SYMLINK:
                digest = symlink_digest(fd, name)
            elif self.hash_files:
                digest, note = digest_file(fd, name, info, self.limits, self._keeper())
        entry = Entry(kind, *stat_key(info), mode, info.st_ctime_ns, digest, note)
        snapshot.entries[path] = entry
        snapshot.fresh.append(path)
        return entry

    def _keeper(self) -> KeepBytes | None:
        if self.keep is None or self.snapshot.kept_bytes >= self.limits.max_kept_bytes:
            return None
        keep = self.keep

        def counted(data: bytes) -> None:
            self.snapshot.kept_bytes += len(data)
            keep(data)

        return counted


def _settled(note: str | None) -> bool:
    return note in SETTLED_NOTES or (note is not None and note.startswith("over "))


def _newest_settled(entries: list[Entry]) -> int:
    """The newest mtime or ctime among a folder's entries, or never-trusted when one of them still
    has to be read (no digest, and no note that reading again would repeat)."""
    newest = 0
    for entry in entries:
        if entry.digest is None and not _settled(entry.note):
            return UNSETTLED
        newest = max(newest, entry.changed_ns)
    return newest


NO_RULES, DEFAULT_LIMITS = TreeRules(), TreeLimits()


def take_snapshot(
    root: Path,
    rules: TreeRules = NO_RULES,
    limits: TreeLimits = DEFAULT_LIMITS,
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

"""What differs between two snapshots: each path created, modified, deleted or mode-changed,
and each folder whose mode changed (`chmod 0777 src/`; the root is "."), from the listings
the walks kept (a folder is not an entry: its creation and removal show in its files').

Entries whose stat is the same are the same (the stat cache), unless the file's mtime was too
close to the before-snapshot to trust (then its bytes decide). Only the paths left are hashed,
in path order and up to the listed cap, so a touched file whose bytes and mode are unchanged
is no change, and a tree with 100,000 new files costs 1,000 reads, not 100,000.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from ...files.path_text import shown_path
from ...receipt_fields import TreeChangeRecord, TreeChangesRecord
from .left_out import LeftOutChange, left_out_changes
from .listing import StatKey
from .snapshot import FOLDER, Entry, Snapshot, TreeLimits

CREATED, MODIFIED, DELETED, MODE_CHANGED = "created", "modified", "deleted", "mode_changed"

HashEntry = Callable[[str, Entry], Entry]


@dataclass(frozen=True)
class TreeChange:
    path: str
    change: str
    before: Entry | None
    after: Entry | None

    @property
    def before_sha256(self) -> str | None:
        return None if self.before is None else self.before.digest

    @property
    def after_sha256(self) -> str | None:
        return None if self.after is None else self.after.digest

    @property
    def protected(self) -> bool:
        return any(entry is not None and entry.note == "protected" for entry in self._entries)

    @property
    def _entries(self) -> tuple[Entry | None, Entry | None]:
        return (self.before, self.after)

    def evidence(self, kept: Callable[[str], bool]) -> TreeChangeRecord:
        """The receipt's record of this change; `note` says what was not read or not kept."""
        notes = [entry.note for entry in self._entries if entry is not None and entry.note]
        missing = [
            digest
            for digest in (self.before_sha256, self.after_sha256)
            if digest is not None and not kept(digest)
        ]
        if missing and not notes:
            notes.append("bytes not kept (over the content store's size cap)")
        return TreeChangeRecord(
            path=self.path,
            change=self.change,
            kind=(self.after or self.before or _MISSING).kind,
            before_sha256=self.before_sha256,
            after_sha256=self.after_sha256,
            before_mode=None if self.before is None else stat.S_IMODE(self.before.mode),
            after_mode=None if self.after is None else stat.S_IMODE(self.after.mode),
            size=None if self.after is None else self.after.size,
            note="; ".join(dict.fromkeys(notes)) or None,
        )


_MISSING = Entry("file", 0, 0, 0, 0, 0, None)


@dataclass(frozen=True)
class TreeChanges:
    """The changes, sorted by path; `count` is every change found, `changes` at most the cap."""

    changes: tuple[TreeChange, ...] = ()
    count: int = 0
    ignored: dict[str, int] = field(default_factory=dict)
    incomplete: str | None = None
    left_out: tuple[LeftOutChange, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(change.path for change in self.changes)

    def evidence(self, kept: Callable[[str], bool]) -> TreeChangesRecord:
        return TreeChangesRecord(
            changes=tuple(change.evidence(kept) for change in self.changes),
            count=self.count,
            listed=len(self.changes),
            ignored=dict(sorted(self.ignored.items())),
            incomplete=self.incomplete,
            left_out_changes=tuple(change.evidence() for change in self.left_out) or None,
        )

    def observation(self, limit: int, heading: str) -> str:
        """A bounded text for the model: the first `limit` changes, protected names withheld."""
        if not self.count and self.incomplete is None and not self.left_out:
            return ""
        lines = [f"{heading} ({self.count}):"]
        shown = [change for change in self.changes if not change.protected][:limit]
        lines += [f"  {change.change} {shown_path(change.path)}" for change in shown]
        protected = sum(change.protected for change in self.changes)
        if protected:
            lines.append(f"  [{protected} protected file{'s' if protected > 1 else ''} changed]")
        more = self.count - len(shown) - protected
        if more > 0:
            lines.append(f"  [and {more} more]")
        lines += [change.line() for change in self.left_out]
        if self.incomplete is not None:
            lines.append(f"  [the comparison is incomplete: {self.incomplete}]")
        return "\n".join(lines)


def classify(before: Entry | None, after: Entry | None) -> str | None:
    """The kind of change from `before` to `after` (None: none), once both are hashed."""
    if before is None:
        return None if after is None else CREATED
    if after is None:
        return DELETED
    if before.kind != after.kind:
        return MODIFIED
    if before.digest is not None and after.digest is not None:
        if before.digest != after.digest:
            return MODIFIED
    elif before[1:4] != after[1:4] or before.ctime_ns != after.ctime_ns:
        return MODIFIED  # not read: a changed ctime may hide a rewrite whose mtime was put back
    return MODE_CHANGED if before.mode != after.mode else None


def compare(
    before: Snapshot, after: Snapshot, hash_entry: HashEntry, limits: TreeLimits
) -> TreeChanges:
    """The changes from `before` to `after`. Stat-changed entries of `after` are hashed with
    `hash_entry` (in path order, while fewer than the cap are listed) and updated in place, so
    `after` serves as the next comparison's stat cache."""
    old, new = before.entries, after.entries
    racy = before.settled_ns
    # An unchanged entry is the very same object (the stat cache's fast path); a walk from
    # `before` lists the paths it recorded anew, so only those are looked at.
    paths = after.fresh if after.base == before.serial else new.keys()
    changed = [
        path
        for path in paths
        if (entry := new[path]) is not (was := old.get(path))
        and (was is None or not entry.same_stat(was) or was.changed_ns >= racy)
    ]
    folders = folder_mode_changes(before, after)
    candidates = sorted(changed + list(old.keys() - new.keys()) + list(folders))
    listed: list[TreeChange] = []
    count = 0
    for path in candidates:
        if path in folders:
            count += 1
            if len(listed) < limits.max_listed_changes:
                listed.append(folders[path])
            continue
        was, now = old.get(path), new.get(path)
        if len(listed) < limits.max_listed_changes:
            if now is not None:
                now = new[path] = hash_entry(path, now)
            change = classify(was, now)
            if change is not None:
                listed.append(TreeChange(path, change, was, now))
                count += 1
        elif classify(was, now) is not None:
            count += 1
    ignored = dict(after.ignored)
    left_out = left_out_changes(before.left_out_folders, after.left_out_folders)
    incomplete = after.incomplete or before.incomplete
    return TreeChanges(tuple(listed), count, ignored, incomplete, left_out)


def folder_mode_changes(before: Snapshot, after: Snapshot) -> dict[str, TreeChange]:
    """Each folder walked into by both snapshots whose mode differs, by path. A folder's
    stat is in its parent's listing, so only the folders whose listing changed are looked at."""
    found: dict[str, TreeChange] = {}
    if before.root is not None and after.root is not None and before.root[4] != after.root[4]:
        found["."] = _folder_change(".", before.root, after.root)
    for prefix, record in after.folders.items():
        was = before.folders.get(prefix)
        if was is None or was is record or was.listing == record.listing:
            continue
        walked = set(record.subfolders).intersection(was.subfolders)
        if not walked:
            continue
        earlier = {key[0]: key for key in was.listing if key[0] in walked}
        for key in record.listing:
            old = earlier.get(key[0])
            if old is not None and old[4] != key[4]:
                found[prefix + key[0]] = _folder_change(prefix + key[0], old, key)
    return found


def _folder_change(path: str, before: StatKey, after: StatKey) -> TreeChange:
    def entry(key: StatKey) -> Entry:
        return Entry(FOLDER, *key[1:], None)

    return TreeChange(path, MODE_CHANGED, entry(before), entry(after))

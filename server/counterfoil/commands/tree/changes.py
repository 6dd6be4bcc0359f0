"""What differs between two snapshots: each path created, modified, deleted or mode-changed.

Entries whose stat is the same are the same (the stat cache), unless the file's mtime was too
close to the before-snapshot to trust (then its bytes decide). Only the paths left are hashed,
in path order and up to the listed cap, so a touched file whose bytes and mode are unchanged
is no change, and a tree with 100,000 new files costs 1,000 reads, not 100,000.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...path_text import shown_path
from .snapshot import RACY_NANOSECONDS, Entry, Snapshot, TreeLimits

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

    def to_dict(self, kept: Callable[[str], bool]) -> dict[str, Any]:
        """The receipt's record of this change; `note` says what was not read or not kept."""
        record: dict[str, Any] = {
            "path": self.path,
            "change": self.change,
            "kind": (self.after or self.before or _MISSING).kind,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
            "before_mode": None if self.before is None else stat.S_IMODE(self.before.mode),
            "after_mode": None if self.after is None else stat.S_IMODE(self.after.mode),
            "size": None if self.after is None else self.after.size,
        }
        notes = [entry.note for entry in self._entries if entry is not None and entry.note]
        missing = [
            digest
            for digest in (self.before_sha256, self.after_sha256)
            if digest is not None and not kept(digest)
        ]
        if missing and not notes:
            notes.append("bytes not kept (over the content store's size cap)")
        if notes:
            record["note"] = "; ".join(dict.fromkeys(notes))
        return record


_MISSING = Entry("file", 0, 0, 0, 0, None)


@dataclass(frozen=True)
class TreeChanges:
    """The changes, sorted by path; `count` is every change found, `changes` at most the cap."""

    changes: tuple[TreeChange, ...] = ()
    count: int = 0
    ignored: dict[str, int] = field(default_factory=dict)
    incomplete: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(change.path for change in self.changes)

    def evidence(self, kept: Callable[[str], bool]) -> dict[str, Any]:
        return {
            "changes": [change.to_dict(kept) for change in self.changes],
            "count": self.count,
            "listed": len(self.changes),
            "ignored": dict(sorted(self.ignored.items())),
            "incomplete": self.incomplete,
        }

    def observation(self, limit: int, heading: str) -> str:
        """A bounded text for the model: the first `limit` changes, protected names withheld."""
        if not self.count and self.incomplete is None:
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
    elif (before.size, before.mtime_ns, before.inode) != (after.size, after.mtime_ns, after.inode):
        return MODIFIED
    return MODE_CHANGED if before.mode != after.mode else None


def compare(
    before: Snapshot, after: Snapshot, hash_entry: HashEntry, limits: TreeLimits
) -> TreeChanges:
    """The changes from `before` to `after`. Stat-changed entries of `after` are hashed with
    `hash_entry` (in path order, while fewer than the cap are listed) and updated in place, so
    `after` serves as the next comparison's stat cache."""
    old, new = before.entries, after.entries
    racy = before.taken_ns - RACY_NANOSECONDS
    # An unchanged entry is the very same object (the stat cache's fast path); a walk from
    # `before` lists the paths it recorded anew, so only those are looked at.
    paths = after.fresh if after.base == before.serial else new.keys()
    changed = [
        path
        for path in paths
        if (entry := new[path]) is not (was := old.get(path))
        and (was is None or not entry.same_stat(was) or was.mtime_ns >= racy)
    ]
    candidates = sorted(changed + list(old.keys() - new.keys()))
    listed: list[TreeChange] = []
    count = 0
    for path in candidates:
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
    return TreeChanges(tuple(listed), count, ignored, after.incomplete or before.incomplete)

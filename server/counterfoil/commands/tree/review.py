"""`review`: a command runs on a private copy of the root (mounted at the root's own path by
bubblewrap), and its changes come back as a change set that only an Accept applies to the
real root, all or nothing, each file checked to still hold what it held when the copy was made.

What the copy holds and leaves out is `review_tree.py`'s; it is removed when review is over.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from ...actions import ToolAction
from ...proposals import ChangeSetProposal, FileRestore
from .changes import TreeChanges, compare
from .restore import check_change_set
from .review_tree import copy_tree
from .snapshot import Entry, KeepBytes, Snapshot, TreeLimits, TreeRules, hash_entry
from .walk import take_snapshot

REVIEW_TOOL = "review"
SET_ID_REFUSED = "it has the setuid or setgid bit, which a review never applies"


class ReviewCopy:
    """The copy a reviewed command runs on, and what it changed there."""

    def __init__(self, root: Path, rules: TreeRules) -> None:
        self.root = root
        self.rules = rules
        self.folder = Path(tempfile.mkdtemp(prefix="counterfoil-review-"))
        self.copy = self.folder / "root"
        # The receipt log's paths (relative) are left out of the copy's snapshots too: the
        # sandbox mounts the real ones there, read-only.
        self.copy_rules = TreeRules(rules.protected_patterns, guarded_paths=rules.guarded_paths)
        try:
            copied = copy_tree(root, self.copy, rules.guarded)
            self.start = take_snapshot(self.copy, self.copy_rules, hash_files=False)
        except BaseException:
            self.remove()
            raise
        self.skipped = copied.skipped
        # The real installs and history, shown to the command read-only at their place.
        self.shared = tuple(copied.shared)

    def changes(self, before: Snapshot, limits: TreeLimits, keep: KeepBytes | None) -> TreeChanges:
        """What the command changed in the copy, measured against the real root's before
        digests (the copy's own stat tells which paths to hash)."""
        start = Snapshot(
            entries={
                path: _with_digest(entry, before.entries.get(path))
                for path, entry in self.start.entries.items()
            },
            ignored=dict(self.start.ignored),
            taken_ns=self.start.taken_ns,
        )
        end = take_snapshot(
            self.copy,
            self.copy_rules,
            limits,
            previous=start,
            hash_files=False,
        )

        def hashed(path: str, entry: Entry) -> Entry:
            return hash_entry(self.copy, path, entry, limits, keep)

        return compare(start, end, hashed, limits)

    def change_set(
        self,
        tool_call_id: str,
        argv: list[str],
        changes: TreeChanges,
        load_object: Callable[[str], bytes | None],
    ) -> ChangeSetProposal:
        """The changes as files to put in the real root, and what cannot be applied (why)."""
        files: list[FileRestore] = []
        left: list[tuple[str, str]] = []
        for change in changes.changes:
            after = change.after
            entry = after or change.before
            if change.protected:
                left.append((change.path, "protected"))
                continue
            if entry is None or entry.kind != "file":
                left.append((change.path, "not a regular file"))
                continue
            content = None
            if after is not None:
                content = None if after.digest is None else load_object(after.digest)
                if content is None:
                    left.append((change.path, after.note or "its bytes were not kept"))
                    continue
            if change.before is not None and change.before_sha256 is None:
                left.append((change.path, change.before.note or "not hashed before"))
                continue
            mode = None if after is None else stat.S_IMODE(after.mode)
            if mode is not None and mode & (stat.S_ISUID | stat.S_ISGID):
                left.append((change.path, SET_ID_REFUSED))
                continue
            files.append(
                FileRestore(change.path, change.before_sha256, content, change.after_sha256, mode)
            )
        if changes.count > len(changes.changes):
            left.append((f"({changes.count - len(changes.changes)} more)", "not listed"))
        ready, alone = check_change_set(
            self.root, files, left, self.rules.protected_patterns, self.rules.guarded
        )
        action = ToolAction(REVIEW_TOOL, {"argv": argv})
        return ChangeSetProposal(tool_call_id, action, ready, alone)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _with_digest(entry: Entry, real: Entry | None) -> Entry:
    """A copied entry with the real root's digest for the same bytes (same kind and size)."""
    if real is None or real.kind != entry.kind or real.size != entry.size:
        return entry
    return entry._replace(digest=real.digest, note=real.note)

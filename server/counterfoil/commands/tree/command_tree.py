"""The tree before and after each approved command of one workspace, and between commands.

The before-snapshot is taken once the command is approved, and keeps every file's bytes (up
to the limits) in the content store, so what a command overwrites or deletes can be put back.
What changed between the last command's after-snapshot and this before-snapshot is drift: a
person's edit or another tool, reported apart and never put on the command's receipt; the
gate's own file effects (which have receipts of their own) are left out of it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ...receipts import ReceiptStore
from .changes import TreeChanges, compare
from .snapshot import Entry, Snapshot, TreeLimits, TreeRules, hash_entry, take_snapshot


class CommandTree:
    def __init__(
        self, root: Path, rules: TreeRules, store: ReceiptStore, limits: TreeLimits
    ) -> None:
        self.root = root
        self.rules = rules
        self.store = store
        self.limits = limits
        self.last: Snapshot | None = None
        self.kept: set[str] = set()
        self._effects: set[str] = set()

    def note_effect(self, path: str) -> None:
        """The gate changed `path` itself (its own receipt says so): not drift."""
        self._effects.add(path)

    def keep(self, data: bytes) -> None:
        self.kept.add(self.store.keep_object(data, durable=False))

    def is_kept(self, digest: str) -> bool:
        return digest in self.kept

    def before(self) -> tuple[Snapshot, TreeChanges]:
        """The snapshot a command's changes are measured from, and the drift since the last."""
        snapshot = take_snapshot(
            self.root, self.rules, self.limits, previous=self.last, keep=self.keep
        )
        drift = TreeChanges(incomplete=snapshot.incomplete)
        if self.last is not None:
            found = compare(self.last, snapshot, lambda path, entry: entry, self.limits)
            others = tuple(change for change in found.changes if change.path not in self._effects)
            drift = replace(
                found, changes=others, count=found.count - (len(found.changes) - len(others))
            )
        self._effects.clear()
        return snapshot, drift

    def after(self, before: Snapshot) -> TreeChanges:
        """What the command changed; the bytes of what it wrote are kept, and made durable with
        the before-bytes the record names."""
        snapshot = take_snapshot(
            self.root, self.rules, self.limits, previous=before, hash_files=False
        )

        def hashed(path: str, entry: Entry) -> Entry:
            return hash_entry(self.root, path, entry, self.limits, self.keep)

        changes = compare(before, snapshot, hashed, self.limits)
        self.last = snapshot
        named = {
            digest
            for change in changes.changes
            for digest in (change.before_sha256, change.after_sha256)
            if digest is not None and digest in self.kept
        }
        self.store.sync_objects(named)
        return changes

    def record(self, changes: TreeChanges, drift: TreeChanges) -> dict[str, Any]:
        """The receipt's fields: the command's changes, and drift (paths only) beside them."""
        record: dict[str, Any] = {"tree_changes": changes.evidence(self.is_kept)}
        if drift.count:
            record["tree_drift"] = {"paths": list(drift.paths), "count": drift.count}
        return record

    def observation(self, changes: TreeChanges, drift: TreeChanges) -> str:
        """What the model is told, bounded: the command's changes, then drift apart."""
        limit = self.limits.max_observed_changes
        parts = [
            changes.observation(limit, "files changed by the command"),
            drift.observation(limit, "changed before the command, not by it"),
        ]
        return "\n".join(part for part in parts if part)

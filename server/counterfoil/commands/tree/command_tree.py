"""The tree before and after each approved command of one workspace, and between commands.

The before-snapshot is taken once the command is approved, and keeps every file's bytes (up
to the limits) in the content store, so what a command overwrites or deletes can be put back.
What changed between the last command's after-snapshot and this before-snapshot is drift: a
person's edit or another tool, reported apart and never put on the command's receipt; the
gate's own file effects (which have receipts of their own) are left out of it.

The stat cache outlives one workspace: every workspace of this process on the same root, log
folder and rules starts from the last snapshot any of them took (drift is still measured from
a workspace's own last command), so a new run's first command walks the tree instead of reading
all of it again. The bytes those digests name stay held from `receipts gc` by a hold of the
cache's own for as long as the process lives.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...receipt_fields import ReceiptEvidence, TreeDriftRecord
from ...receipts import ReceiptStore
from ...receipts.content import store_object
from ...receipts.hold import ObjectHold
from ...receipts.own_folder import make_own_folder
from .changes import TreeChanges, compare
from .snapshot import Entry, Snapshot, TreeLimits, TreeRules, hash_entry
from .walk import take_snapshot


@dataclass
class TreeCache:
    """The last snapshot of one root, the digests whose bytes are in the content store, and
    the hold that keeps those bytes from gc (None for a store in memory)."""

    hold: ObjectHold | None
    snapshot: Snapshot | None = None
    kept: set[str] = field(default_factory=set)


_caches: dict[tuple[str, str, tuple[str, ...], frozenset[str]], TreeCache] = {}
_caches_lock = threading.Lock()


def tree_cache(root: Path, rules: TreeRules, store: ReceiptStore) -> TreeCache:
    """This process's cache for `root` with `store`'s log folder and `rules` (a store in
    memory keeps nothing, so its workspace gets a cache of its own)."""
    if store.path is None:
        return TreeCache(None)
    folder = make_own_folder(store.path)
    key = (str(root), str(folder), rules.protected_patterns, rules.guarded_paths)
    with _caches_lock:
        if key not in _caches:
            _caches[key] = TreeCache(ObjectHold(folder))
        return _caches[key]


class CommandTree:
    def __init__(
        self, root: Path, rules: TreeRules, store: ReceiptStore, limits: TreeLimits
    ) -> None:
        self.root = root
        self.rules = rules
        self.store = store
        self.limits = limits
        self.last: Snapshot | None = None
        self.cache = tree_cache(root, rules, store)
        self.kept = self.cache.kept
        self._effects: set[str] = set()

    def note_effect(self, path: str) -> None:
        """The gate changed `path` itself (its own receipt says so): not drift."""
        self._effects.add(path)

    def keep(self, data: bytes) -> None:
        if self.store.path is None or self.cache.hold is None:
            self.kept.add(self.store.keep_object(data, durable=False))
        else:
            hold = self.cache.hold
            self.kept.add(store_object(hold.log_folder, data, hold, durable=False))

    def is_kept(self, digest: str) -> bool:
        return digest in self.kept

    def before(self) -> tuple[Snapshot, TreeChanges]:
        """The snapshot a command's changes are measured from, and the drift since the last."""
        previous = self.last or self.cache.snapshot
        snapshot = take_snapshot(
            self.root, self.rules, self.limits, previous=previous, keep=self.keep
        )
        self.cache.snapshot = snapshot
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
        self.last = self.cache.snapshot = snapshot
        named = {
            digest
            for change in changes.changes
            for digest in (change.before_sha256, change.after_sha256)
            if digest is not None and digest in self.kept
        }
        self.store.sync_objects(named)
        return changes

    def record(self, changes: TreeChanges, drift: TreeChanges) -> ReceiptEvidence:
        """The receipt's fields: the command's changes, and drift (paths only) beside them."""
        return ReceiptEvidence(
            tree_changes=changes.evidence(self.is_kept),
            tree_drift=TreeDriftRecord(paths=drift.paths, count=drift.count)
            if drift.count
            else None,
        )

    def observation(self, changes: TreeChanges, drift: TreeChanges) -> str:
        """What the model is told, bounded: the command's changes, then drift apart."""
        limit = self.limits.max_observed_changes
        parts = [
            changes.observation(limit, "files changed by the command"),
            drift.observation(limit, "changed before the command, not by it"),
        ]
        return "\n".join(part for part in parts if part)

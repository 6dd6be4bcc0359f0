"""What "Keep this branch" would do, said before it is done: the changes it applies to the
root (or that there are none), the run it ends and the branches it discards, and whether that is
enough to ask the person first (ending a run or discarding a branch cannot be taken back)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..sessions.store import SessionStore
from .copies import BranchCopy, pending_changes
from .records import BranchRecord, BranchStore


@dataclass(frozen=True)
class KeepPlan:
    words: str  # "Keep applies 1 change to the root, ends run … and discards …."
    asks: bool  # it ends the run it came from or discards another branch


def keep_plan(
    sessions: SessionStore, store: BranchStore, branch: BranchRecord, family: Sequence[BranchRecord]
) -> KeepPlan:
    """The plan for keeping `branch` of a run whose branches are `family`."""
    copy_root = store.copy_root(branch)
    copy = BranchCopy(branch.name, copy_root, store.copy_log(branch), dict(branch.base))
    changes = len(pending_changes(copy, Path(branch.root))) if copy_root.is_dir() else 0
    parent_open = sessions.load(branch.run_id).state != "ended"
    others = [
        other.name
        for other in family
        if other.number != branch.number and other.state != "discarded"
    ]
    parts = [
        f"applies {changes} change{'' if changes == 1 else 's'} to the root, each asked like "
        "any edit"
        if changes
        else "has nothing to apply: no file in the root changes"
    ]
    if parent_open:
        parts.append(f"ends run {branch.run_id}, which can then no longer be resumed")
    if others:
        copies = "its copy is" if len(others) == 1 else "their copies are"
        parts.append(f"discards {', '.join(others)} ({copies} removed)")
    words = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return KeepPlan(f"Keep {words}.", parent_open or bool(others))

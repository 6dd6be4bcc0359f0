"""Branches as isolated copies of the root, and the chosen one applied to the real root.

`fork_root` copies the root (copy-on-write where the file system offers it; links recreated,
never followed; the receipt log's folder left out) and, beside it, the receipt log with its
head and content store, so the branch's log starts byte-identical to the parent's and later
receipts stay in the branch. It notes every file's digest at the fork: the base.

`apply_branch` applies what the branch changed as ordinary effects in the real root: each a
`write_file` proposal, approved by the person's callback and receipted with the approval saying
which branch it came from; never a silent merge. If any file it would touch no longer holds
its base, nothing is applied.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..actions import ToolAction
from ..commands.tree.ignore import CACHE_NAMES
from ..errors import AgentError
from ..files.tree_copy import CopyCount, Snapshot, copy_tree, read_relative, snapshot
from ..gate.policy import ToolPolicy
from ..gate.workspace import Workspace
from ..gate.workspace_setup import WorkspaceSetup
from ..proposals import ToolProposal
from ..receipt_fields import ApprovalRecord
from ..receipts import ReceiptStore
from ..receipts.content import OBJECTS_FOLDER
from ..receipts.guard import LogGuard
from ..receipts.head import head_path
from ..receipts.own_folder import make_own_folder, own_folder

MAX_APPLIED_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class BranchCopy:
    name: str
    root: Path  # the branch's own copy of the root
    log: Path  # its receipt log, a copy of the parent's at the fork
    base: Snapshot  # the parent's files at the fork
    copied: CopyCount = field(default_factory=CopyCount)  # how the root's files were copied


@dataclass(frozen=True)
class BranchChange:
    path: str
    content: bytes | None  # None: the branch removed the file


def fork_root(name: str, root: Path, log: Path, destination: Path) -> BranchCopy:
    """Copy `root` (all but the receipt log's files) into `destination/name/root` and the log
    into `destination/name/receipts`, a new folder."""
    if not isinstance(name, str) or not name.strip() or "/" in name or name in (".", ".."):
        raise ValueError("branch name must be one non-blank path part")
    root, log = root.resolve(), log.absolute()
    folder = destination / name
    folder.mkdir(parents=True)
    branch_root = folder / "root"
    skip = _log_paths(root, log)
    copied = copy_tree(root, branch_root, keep_links=True, keep_modes=True, skip=skip)
    branch_log = folder / "receipts" / log.name
    branch_log.parent.mkdir()
    for path in (log, head_path(log)):
        if path.is_file():
            shutil.copy2(path, branch_log.parent / path.name, follow_symlinks=False)
    objects = own_folder(log) / OBJECTS_FOLDER
    if objects.is_dir():
        copy_tree(objects, make_own_folder(branch_log) / OBJECTS_FOLDER)
    return BranchCopy(name, branch_root, branch_log, snapshot(root, skip), copied)


def _log_paths(root: Path, log: Path) -> Callable[[str], bool]:
    """Whether a relative path belongs to the receipt log (the log, its head, content store,
    holds; its whole folder when that lies inside the root): never a change of the branch."""
    guard = LogGuard.of(log, root)
    return lambda path: guard.hides(root / path)


def changed_paths(branch: BranchCopy) -> tuple[str, ...]:
    """The paths the branch added, changed or removed since the fork (whatever they now are:
    a symlink or a big file is named here, and refused only when it would be applied)."""
    return tuple(path for path, _ in _differences(branch))


def _differences(branch: BranchCopy) -> list[tuple[str, tuple[str, str] | None]]:
    now = snapshot(branch.root, _log_paths(branch.root, branch.log))
    found = []
    for path in sorted(set(branch.base) | set(now)):
        before, after = branch.base.get(path), now.get(path)
        if before == after or (_folder_or_nothing(before) and _folder_or_nothing(after)):
            continue
        if CACHE_NAMES.intersection(path.split("/")):
            continue
        found.append((path, after))
    return found


def branch_changes(branch: BranchCopy) -> tuple[BranchChange, ...]:
    """The files the branch added, changed or removed since the fork, in path order; what
    tools rewrite all the time (`__pycache__/`, `.pytest_cache/`, …) is not a change. A file
    replaced by a folder is removed; a folder replaced by a file, that file added."""
    changes = []
    for path, after in _differences(branch):
        if after is None or after[0] == "dir":
            changes.append(BranchChange(path, None))
        elif after[0] != "file":
            raise AgentError(f"branch {branch.name}: {path} is not a regular file")
        else:
            changes.append(BranchChange(path, read_relative(branch.root, path, MAX_APPLIED_BYTES)))
    return tuple(changes)


def _folder_or_nothing(entry: tuple[str, str] | None) -> bool:
    return entry is None or entry[0] == "dir"


def apply_branch(
    branch: BranchCopy,
    policy: ToolPolicy,
    store: ReceiptStore,
    confirm: Callable[[ToolProposal], object],
    *,
    via: str = "cli",
    run_id: str | None = None,
    before_effect: Callable[[ToolProposal, ApprovalRecord], None] | None = None,
) -> tuple[str, ...]:
    """Write the branch's changes into `policy.root`, each approved by `confirm` and receipted
    in `store` as approved via `via`, selecting this branch. Raises AgentError, before any
    change, when a file no longer holds its base, or the branch removed a file or wrote bytes
    that are not text; a change denied or refused stops there (the earlier ones stay, with
    their receipts, and a later selection of the branch does not ask for them again)."""
    changes = pending_changes(branch, policy.root)
    for change in changes:
        base = branch.base.get(change.path)
        if base is not None and base[0] == "dir":
            raise AgentError(
                f"branch {branch.name} put a file where the folder {change.path} was; "
                "apply that by hand"
            )
        current = _digest(policy.root, change.path)
        if current != (base[1] if base else None):
            raise AgentError(f"the base changed since the fork: {change.path}; nothing was applied")
        if change.content is None:
            raise AgentError(f"branch {branch.name} removed {change.path}; apply that by hand")
        try:
            change.content.decode("utf-8")
        except UnicodeDecodeError:
            raise AgentError(
                f"branch {branch.name} wrote {change.path} as bytes, not text"
            ) from None
    setup = WorkspaceSetup(
        confirm_proposal=confirm,
        approval_via=f"{via}, selecting branch {branch.name}",
        run_id=run_id,
        before_effect=before_effect,  # its intent, durable before each write
    )
    workspace = Workspace(policy, receipt_store=store, setup=setup)
    results = []
    for change in changes:
        assert change.content is not None
        base = branch.base.get(change.path)
        if _digest(policy.root, change.path) != (base[1] if base else None):
            # Saved by the person while an earlier change was asked: never written over.
            raise AgentError(f"the base changed since the fork: {change.path}; it was not applied")
        if change.path in branch.base:
            workspace.read_file(change.path)  # the gate writes only over bytes it has seen
        action = ToolAction("write_file", {"path": change.path, "content": change.content.decode()})
        step = workspace.execute_step(action)
        if step.error is not None:
            raise AgentError(f"{change.path}: {step.error}")
        results.append(step.observation)
    return tuple(results)


def pending_changes(branch: BranchCopy, root: Path) -> tuple[BranchChange, ...]:
    """The branch's changes that `root` does not hold yet."""
    return tuple(change for change in branch_changes(branch) if not _applied(root, change))


def _applied(root: Path, change: BranchChange) -> bool:
    """Whether the real root already holds what the branch left at this path."""
    current = _digest(root, change.path)
    if change.content is None:
        return current is None
    return current == hashlib.sha256(change.content).hexdigest()


def _digest(root: Path, path: str) -> str | None:
    if not os.path.lexists(root / path):
        return None
    try:
        return hashlib.sha256(read_relative(root, path, MAX_APPLIED_BYTES)).hexdigest()
    except AgentError:
        return "unreadable"

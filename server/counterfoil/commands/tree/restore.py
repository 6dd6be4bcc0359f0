"""Putting files in recorded states: reverting a command, applying a reviewed command's changes.

Every step walks from the root through descriptors opened with O_NOFOLLOW, so no symlink on
the way is followed; a path that is protected, a symlink, not a regular file, or a file with
other hard links is left alone and named, never read through or written. Each file must hold
its expected digest right before it is written (a file changed since is left alone and named,
or, for an all-or-nothing set, nothing is written).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from ...actions import ToolAction
from ...errors import AgentError
from ...files.files import READ_FLAGS, closed_after, open_folder_path, replace_file
from ...files.path_text import shown_path
from ...files.paths import relative_parts
from ...proposals import ChangeSetProposal, FileRestore
from ...receipt_fields import ReceiptEvidence, TreeChangeRecord, TreeChangesRecord

CHANGED_SINCE = "changed since the command"
LoadObject = Callable[[str], bytes | None]


def plan_command_revert(
    call_id: str, record: TreeChangesRecord | None, load_object: LoadObject
) -> tuple[list[FileRestore], list[tuple[str, str]]]:
    """From a command's `tree_changes`: the files to put back, and those it cannot (why)."""
    if record is None or record.changes is None:
        raise AgentError(f"the receipt of {call_id} does not record what the command changed")
    files: list[FileRestore] = []
    left: list[tuple[str, str]] = []
    for change, path in _named(record.changes):
        why = _why_not(change)
        if why is not None:
            left.append((path, why))
            continue
        before = change.before_sha256
        content = None if before is None else load_object(before)
        if before is not None and content is None:
            left.append((path, "the bytes before the command were not kept"))
            continue
        files.append(FileRestore(path, change.after_sha256, content, before, change.before_mode))
    files = _with_made_folders(files, record.changes)
    unlisted = (record.count or 0) - len(record.changes)
    if unlisted > 0:
        left.append((f"({unlisted} more)", "not listed on the receipt"))
    return files, left


def can_revert_command(evidence: ReceiptEvidence) -> bool:
    """Whether a command's receipt records a change that reached the root and that its revert
    can put back (`plan_command_revert` takes it); the bytes before it and the file as it is
    now are checked when the revert is proposed."""
    record = applied_record(evidence)
    if record is None or record.changes is None:
        return False
    return any(_why_not(change) is None for change, _ in _named(record.changes))


def _named(changes: tuple[TreeChangeRecord, ...]) -> Iterator[tuple[TreeChangeRecord, str]]:
    """The recorded changes that name a path, with it (any other is passed over)."""
    for change in changes:
        if change.path is not None:
            yield change, change.path


def applied_record(evidence: ReceiptEvidence) -> TreeChangesRecord | None:
    """A command's `tree_changes` as far as they reached the root: a reviewed command's
    changes were made in a copy, and only those its review applied are the root's to revert."""
    record, review = evidence.tree_changes, evidence.review
    if review is None or record is None:
        return record
    paths = set(review.applied or ())
    kept = tuple(change for change in record.changes or () if change.path in paths)
    return replace(record, changes=kept, count=len(kept))


def _with_made_folders(
    files: list[FileRestore], changes: tuple[TreeChangeRecord, ...]
) -> list[FileRestore]:
    """A file the command deleted and whose path holds files it created was replaced by a
    folder: the folders it made there (the created files' parents, deepest first) go first."""
    created = [path for change, path in _named(changes) if change.change == "created"]
    planned: list[FileRestore] = []
    for item in files:
        inside = [path for path in created if path.startswith(item.path + "/")]
        if item.expected_sha256 is not None or item.content is None or not inside:
            planned.append(item)
            continue
        folders = {
            str(parent)
            for path in inside
            for parent in PurePosixPath(path).parents
            if parent.is_relative_to(item.path)
        }
        made = tuple(sorted(folders, key=lambda folder: (-folder.count("/"), folder)))
        planned.append(replace(item, made_folders=made))
    return planned


def _why_not(change: TreeChangeRecord) -> str | None:
    if change.kind != "file":
        return f"a {change.kind}, not a regular file"
    note = change.note or ""
    if "protected" in note:
        return "protected"
    if "hard links" in note:
        return "has other hard links"
    wanted = [change.after_sha256] if change.change != "deleted" else []
    if change.change != "created":
        wanted.append(change.before_sha256)
    if any(digest is None for digest in wanted):
        return "not hashed when recorded"
    return None


@contextmanager
def _parent(root: Path, parts: tuple[str, ...], create: bool) -> Iterator[int]:
    """A descriptor on root/parts[:-1], made (never through a symlink) when `create`."""
    with closed_after(
        open_folder_path(root, parts[:-1], create_mode=0o777 if create else None)
    ) as fd:
        yield fd


def current_state(directory: int, name: str) -> tuple[str | None, bytes | None]:
    """(digest, bytes up to 1 MiB for a diff) of a plain, singly linked file; (None, None)
    when absent; AgentError when it is anything else."""
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise AgentError("not a regular file now")
    if info.st_nlink > 1:
        raise AgentError("has other hard links")
    fd = os.open(name, READ_FLAGS, dir_fd=directory)
    try:
        hasher, shown = hashlib.sha256(), bytearray()
        while chunk := os.read(fd, 1 << 20):
            hasher.update(chunk)
            if len(shown) <= 1 << 20:
                shown += chunk
        return hasher.hexdigest(), bytes(shown) if len(shown) <= 1 << 20 else None
    finally:
        os.close(fd)


def check_file(root: Path, item: FileRestore, protected: tuple[str, ...]) -> FileRestore:
    """`item` with what the file holds now, or AgentError naming why it is left alone."""
    parts = relative_parts(item.path, protected)
    mode: int | None = None
    try:
        with _parent(root, parts, create=False) as directory:
            if item.made_folders and _is_folder(directory, parts[-1]):
                return item  # the folder the command made: removed first, when empty
            digest, data = current_state(directory, parts[-1])
            if digest is not None:
                info = os.stat(parts[-1], dir_fd=directory, follow_symlinks=False)
                mode = stat.S_IMODE(info.st_mode)
    except FileNotFoundError:
        digest, data = None, None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise AgentError("a symlink on the path") from None
        raise AgentError(error.strerror or str(error)) from None
    if digest != item.expected_sha256:
        raise AgentError(CHANGED_SINCE)
    return replace(item, current=data, current_mode=mode)


def _write(directory: int, name: str, data: bytes, mode: int | None) -> None:
    """Replace `name` atomically, then give it `mode` through a descriptor opened without
    following a link."""
    replace_file(directory, name, data, None)
    if mode is None:
        return
    fd = os.open(name, READ_FLAGS, dir_fd=directory)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fchmod(fd, stat.S_IMODE(mode))
    finally:
        os.close(fd)


def _is_folder(directory: int, name: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def _remove_made_folders(root: Path, item: FileRestore, protected: tuple[str, ...]) -> None:
    """Remove the folders the command made where the file was, each only when empty."""
    for folder in item.made_folders:
        parts = relative_parts(folder, protected)
        try:
            with _parent(root, parts, create=False) as directory:
                os.rmdir(parts[-1], dir_fd=directory)
        except FileNotFoundError:
            continue
        except OSError as error:
            if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise AgentError("the folder the command made is not empty now") from None
            raise AgentError(error.strerror or str(error)) from None


def apply_file(root: Path, item: FileRestore, protected: tuple[str, ...]) -> None:
    """Put one file in its state, if it still holds the expected digest (else AgentError)."""
    if item.made_folders:
        _remove_made_folders(root, item, protected)
    parts = relative_parts(item.path, protected)
    with _parent(root, parts, create=item.content is not None) as directory:
        try:
            digest, _ = current_state(directory, parts[-1])
        except OSError as error:
            raise AgentError(error.strerror or str(error)) from None
        if digest != item.expected_sha256:
            raise AgentError(CHANGED_SINCE)
        if item.content is None:
            os.unlink(parts[-1], dir_fd=directory)
            os.fsync(directory)
        else:
            _write(directory, parts[-1], item.content, item.mode)


def check_change_set(
    root: Path,
    files: list[FileRestore],
    left: list[tuple[str, str]],
    protected: tuple[str, ...],
    guarded: Callable[[Path], bool],
) -> tuple[tuple[FileRestore, ...], tuple[tuple[str, str], ...]]:
    """The files that can be put in their states now (with their current bytes, for the diff)
    and every other path named with why it is left alone."""
    ready: list[FileRestore] = []
    alone = list(left)
    for item in files:
        try:
            if guarded(root.joinpath(*relative_parts(item.path, protected))):
                raise AgentError("path is not accessible")
            ready.append(check_file(root, item, protected))
        except AgentError as error:
            alone.append((item.path, str(error)))
    return tuple(ready), tuple(alone)


def apply_change_set(
    root: Path, files: tuple[FileRestore, ...], protected: tuple[str, ...], *, all_or_nothing: bool
) -> tuple[list[FileRestore], list[tuple[str, str]]]:
    """Apply each file that still holds its expected digest; the others are left alone and
    named. `all_or_nothing`: every file is checked first and nothing is written unless all
    still hold what was shown."""
    if all_or_nothing:
        for item in files:
            try:
                check_file(root, item, protected)
            except AgentError as error:
                raise AgentError(f"{item.path}: {error}; nothing was applied") from None
    applied: list[FileRestore] = []
    alone: list[tuple[str, str]] = []
    # A file that a folder replaced comes back once the files in that folder are gone.
    for item in sorted(files, key=lambda item: bool(item.made_folders)):
        try:
            apply_file(root, item, protected)
        except AgentError as error:
            alone.append((item.path, str(error)))
        except OSError as error:
            alone.append((item.path, error.strerror or str(error)))
        else:
            applied.append(item)
    return applied, alone


def change_set_record(
    applied: list[FileRestore], alone: list[tuple[str, str]] | tuple[tuple[str, str], ...]
) -> TreeChangesRecord:
    """A change set's `tree_changes`: what it did to each file, in the commands' vocabulary."""
    changes = tuple(
        TreeChangeRecord(
            path=item.path,
            change="created"
            if item.expected_sha256 is None
            else "deleted"
            if item.content is None
            else "modified",
            kind="file",
            before_sha256=item.expected_sha256,
            after_sha256=item.content_sha256 if item.content is not None else None,
            before_mode=None,
            after_mode=None if item.content is None else item.mode,
            size=None if item.content is None else len(item.content),
        )
        for item in sorted(applied, key=lambda item: item.path)
    )
    return TreeChangesRecord(
        changes=changes,
        count=len(changes),
        listed=len(changes),
        ignored={},
        incomplete=None,
        left_alone=tuple(tuple(pair) for pair in alone),
    )


def change_set_result(
    verb: str,
    applied: list[FileRestore],
    alone: list[tuple[str, str]] | tuple[tuple[str, str], ...],
) -> str:
    """The observation: what was done to which file, then what was left alone and why."""
    lines = [f"{verb} {len(applied)} file{'s' if len(applied) != 1 else ''}:"]
    lines += [f"  {shown_path(item.path)}" for item in applied]
    if alone:
        lines.append("left alone:")
        lines += [f"  {shown_path(path)}: {why}" for path, why in alone]
    return "\n".join(lines)


def propose_command_revert(
    call_id: str,
    tool_call_id: str,
    record: TreeChangesRecord | None,
    load_object: LoadObject,
    root: Path,
    protected: tuple[str, ...],
    guarded: Callable[[Path], bool],
) -> ChangeSetProposal:
    """The change set that puts back what a command changed (its receipt's `tree_changes`),
    or AgentError when none of it can be put back."""
    planned, left = plan_command_revert(call_id, record, load_object)
    files, alone = check_change_set(root, planned, left, protected, guarded)
    if not files:
        reasons = (
            "; ".join(f"{shown_path(path)}: {why}" for path, why in alone) or "it changed no file"
        )
        raise AgentError(f"nothing of {call_id} can be reverted ({reasons})")
    action = ToolAction("revert", {"tool_call_id": call_id})
    return ChangeSetProposal(tool_call_id, action, files, alone, reverts=call_id)


@dataclass(frozen=True)
class AppliedChangeSet:
    changed: tuple[tuple[str, str | None], ...]  # each file written, with its new digest
    result: str
    evidence: ReceiptEvidence


def apply_approved_change_set(
    proposal: ChangeSetProposal, root: Path, protected: tuple[str, ...]
) -> AppliedChangeSet:
    """Apply an approved change set: a revert leaves a file changed since alone, a reviewed
    set is applied whole or not at all."""
    applied, alone = apply_change_set(
        root, proposal.files, protected, all_or_nothing=proposal.reverts is None
    )
    left = [*proposal.left_alone, *alone]
    verb = f"reverted {proposal.reverts} in" if proposal.reverts else "applied"
    evidence = ReceiptEvidence(
        tree_changes=change_set_record(applied, left), reverts=proposal.reverts
    )
    changed = tuple((item.path, item.content_sha256) for item in applied)
    return AppliedChangeSet(changed, change_set_result(verb, applied, left), evidence)

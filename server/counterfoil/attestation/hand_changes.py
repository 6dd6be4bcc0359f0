"""Every byte a commit changes, accounted for: a path a receipt wrote those very bytes to, or a
change made by hand.

The range the evidence claims is the commit against its first parent. A path whose committed
bytes (or absence) are what the runs' last receipt for it left is the agent's; any other changed
path, and any receipted path whose committed bytes differ, was changed by hand. A receipt
writes a regular file, so a receipted path committed as a symlink (whose target text can equal
the receipted bytes) or newly executable was changed by hand too: the tree entry's mode counts,
not only its bytes. The evidence cannot say when a hand change was made, so each one counts as made after the last validation:
accepted only where the team allows it by pattern, and never when a validation command names
the file in its argv (it reads or runs it), since then the check that passed is not the check
that was committed.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .git import Repository

REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"


@dataclass(frozen=True)
class HandChange:
    """A path the commit changed with bytes no receipt wrote (or `removed` where no receipt
    removed it, or `mode`: the committed tree entry's mode where no receipt leaves that one);
    `read_by`: the call id of a validation command whose argv names it; `allowed_by`: the
    pattern that accepts it."""

    path: str
    removed: bool = False
    mode: str | None = None
    read_by: str | None = None
    allowed_by: str | None = None

    @property
    def accepted(self) -> bool:
        return self.read_by is None and self.allowed_by is not None


def receipted_digests(predicate: dict[str, Any]) -> dict[str, str | None]:
    """Each repository path the effects changed, and the digest its last receipt left (None:
    removed), in effect order."""
    prefix = str(predicate["root"])
    left: dict[str, str | None] = {}
    for effect in predicate["effects"]:
        changed = effect.get("changed") if isinstance(effect, dict) else None
        for item in changed if isinstance(changed, list) else []:
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                digest = item.get("sha256")
                left[prefix + item["path"]] = digest if isinstance(digest, str) else None
    return left


def argv_paths(predicate: dict[str, Any]) -> list[tuple[str, str]]:
    """(repository path, call id) for each argument of each command that names a path inside
    the root: `validate.py`, `tests/`, the `x` of `--config=x`."""
    prefix = str(predicate["root"])
    found: list[tuple[str, str]] = []
    for effect in predicate["effects"]:
        if not isinstance(effect, dict) or effect.get("tool") != "run_command":
            continue
        argv = effect.get("argv")
        for argument in argv if isinstance(argv, list) else []:
            if not isinstance(argument, str) or not argument:
                continue
            for candidate in {argument, argument.partition("=")[2]} - {""}:
                if candidate.startswith("/"):
                    continue
                path = posixpath.normpath(prefix + candidate)
                if path != ".." and not path.startswith("../"):
                    found.append((path, str(effect.get("call_id"))))
    return found


def receipted_mode(mode: str | None, parent_mode: str | None) -> bool:
    """Whether a committed tree entry is one a receipt leaves: a regular file, executable only
    where the first parent already had it so (a write keeps a file's mode and never sets it)."""
    return mode == REGULAR or (mode == EXECUTABLE and parent_mode == EXECUTABLE)


def _named_by(path: str, named: list[tuple[str, str]]) -> str | None:
    for argument, call_id in named:
        if argument == "." or path == argument or path.startswith(argument + "/"):
            return call_id
    return None


def hand_changes(
    predicate: dict[str, Any], repository: Repository, commit: str, allowed: tuple[str, ...]
) -> tuple[HandChange, ...]:
    """Every path `commit` changed (against its first parent) that no receipt wrote, and every
    receipted path whose committed bytes are not the ones the receipt left; sorted by path."""
    receipted = receipted_digests(predicate)
    changed = repository.changed_paths(commit)
    paths = sorted(changed | set(receipted))
    committed = repository.blobs(commit, paths)
    modes = repository.modes(commit, paths)
    parent = repository.first_parent(commit)
    before = repository.modes(parent, paths) if parent is not None else dict.fromkeys(paths)
    named = argv_paths(predicate)
    found: list[HandChange] = []
    for path in paths:
        data = committed[path]
        digest = None if data is None else hashlib.sha256(data).hexdigest()
        mode_kept = data is None or receipted_mode(modes[path], before[path])
        if path in receipted and receipted[path] == digest and mode_kept:
            continue
        if path not in changed and (path not in receipted or data is None):
            continue  # unchanged here, and a file the commit does not hold is no subject
        pattern = next((item for item in allowed if fnmatchcase(path, item)), None)
        mode = None if mode_kept else modes[path]
        found.append(HandChange(path, data is None, mode, _named_by(path, named), pattern))
    return tuple(found)

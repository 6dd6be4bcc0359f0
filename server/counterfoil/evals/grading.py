"""Grading a staged workspace after a run: the package's held-out checks and the changes it did
not allow.

Everything here reads through descriptors that follow no link, and nothing the model wrote is
imported or run by the grader itself: a Python constant is read with `ast`, so a candidate
module that raises on import is graded like any other. Only a `command` check runs a program,
the package's own, confined in a copy (`held_out_command.py`). Values compare type-strictly (`1` is not `1.0` and not `true`). A file the
model wrote that no parser here can take (nested past the interpreter's depth, a number past
its digits) fails its check with that reason: it never stops the evaluation.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..commands.tree.ignore import CACHE_NAMES
from ..commands.tree.sandbox import CONFINE
from ..errors import AgentError
from ..files.files import open_directory
from ..files.tree_copy import Snapshot, read_relative
from .held_out_command import run_command_check
from .package import PackageCheck, TaskPackage

MAX_GRADED_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Grading:
    """What every grader is given besides the check: the package, what the root held before
    the run, and how a `command` check runs (`sandbox` mode, hiding `hidden` from it)."""

    package: TaskPackage
    before: Snapshot
    sandbox: str = CONFINE
    hidden: tuple[Path, ...] = ()


@dataclass(frozen=True)
class CheckResult:
    name: str
    type: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Modification:
    """A path the run changed that the package did not let it change."""

    path: str
    change: str  # added, removed or changed


def forbidden_modifications(
    package: TaskPackage, before: Snapshot, after: Snapshot
) -> tuple[Modification, ...]:
    """Paths added, removed or changed outside the editable paths: files, and anything whose
    kind changed (a file replaced by an empty folder is a change); a folder only added or
    removed is not one by itself (the files in it are), and what tools rewrite all the time
    (`__pycache__/`, `.pytest_cache/`, …) is none, as for a branch's changes."""
    found = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new or package.editable(path) or CACHE_NAMES.intersection(path.split("/")):
            continue
        if _folder_or_nothing(old) and _folder_or_nothing(new):
            continue
        change = "added" if old is None else "removed" if new is None else "changed"
        found.append(Modification(path, change))
    return tuple(found)


def _folder_or_nothing(entry: tuple[str, str] | None) -> bool:
    return entry is None or entry[0] == "dir"


def grade(
    package: TaskPackage,
    root: Path,
    before: Snapshot,
    *,
    sandbox: str = CONFINE,
    hidden: tuple[Path, ...] = (),
) -> tuple[CheckResult, ...]:
    """Each held-out check on the staged workspace at `root`, in name order; a `command`
    check runs in `sandbox` mode, which hides `hidden` from it (see `held_out_command.py`)."""
    grading = Grading(package, before, sandbox, hidden)
    return tuple(_grade_one(check, root, grading) for check in package.checks)


def _grade_one(check: PackageCheck, root: Path, grading: Grading) -> CheckResult:
    try:
        passed, detail = GRADERS[check.type](check, root, grading)
    except (RecursionError, MemoryError):
        passed, detail = False, f"could not be decided: {check.path} is nested too deeply"
    return CheckResult(check.name, check.type, passed, detail)


def _kind(root: Path, path: str) -> str:
    parts = tuple(path.split("/"))
    try:
        with open_directory(root, parts[:-1]) as directory:
            mode = os.stat(parts[-1], dir_fd=directory, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "missing"
    except AgentError as error:
        return "missing" if str(error) == "path is not accessible" else "link"
    if stat.S_ISLNK(mode):
        return "link"
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _read(root: Path, path: str) -> bytes:
    return read_relative(root, path, MAX_GRADED_BYTES)


def _exists(check: PackageCheck, root: Path, _grading: Grading) -> tuple[bool, str]:
    kind = _kind(root, check.path)
    if kind in ("file", "dir"):
        return True, f"{check.path} exists"
    return False, f"{check.path} is a symlink" if kind == "link" else f"{check.path} is missing"


def _absent(check: PackageCheck, root: Path, _grading: Grading) -> tuple[bool, str]:
    if _kind(root, check.path) == "missing":
        return True, f"{check.path} is absent"
    return False, f"{check.path} exists"


def _unchanged(check: PackageCheck, root: Path, grading: Grading) -> tuple[bool, str]:
    try:
        digest = hashlib.sha256(_read(root, check.path)).hexdigest()
    except (AgentError, OSError) as error:
        return False, f"{check.path}: {error}"
    if ("file", digest) == grading.before.get(check.path):
        return True, f"{check.path} is unchanged"
    return False, f"{check.path} changed"


def _text(check: PackageCheck, root: Path, _grading: Grading) -> tuple[bool, str]:
    try:
        text = _read(root, check.path).decode("utf-8")
    except (AgentError, OSError, UnicodeDecodeError) as error:
        return False, f"{check.path}: {error}"
    if text == check.expected:
        return True, "text matches"
    return False, "text differs"


def _json_value(check: PackageCheck, root: Path, _grading: Grading) -> tuple[bool, str]:
    assert check.pointer is not None
    try:
        document = json.loads(_read(root, check.path).decode("utf-8"))
    except (AgentError, OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return False, f"{check.path}: {error}"
    except RecursionError:
        return False, f"could not be decided: {check.path} is JSON nested too deeply to read"
    except ValueError as error:  # an integer past the interpreter's digits
        return False, f"could not be decided: {check.path}: {error}"
    found, value = resolve_pointer(document, check.pointer)
    if not found:
        return False, f"{check.pointer or '(root)'} is not in {check.path}"
    if strictly_equal(value, check.expected):
        return True, f"{check.pointer} is {_shown(value)}"
    return False, f"{check.pointer} is {_shown(value)}, expected {_shown(check.expected)}"


def _python_constant(check: PackageCheck, root: Path, _grading: Grading) -> tuple[bool, str]:
    assert check.constant is not None
    try:
        tree = ast.parse(_read(root, check.path).decode("utf-8"), check.path)
    except (AgentError, OSError, UnicodeDecodeError, SyntaxError, ValueError) as error:
        return False, f"{check.path}: {error}"
    except (RecursionError, MemoryError):
        return False, f"could not be decided: {check.path} is Python nested too deeply to parse"
    node = module_constant(tree, check.constant)
    if node is None:
        return False, f"{check.constant} is not assigned at the top of {check.path}"
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, f"{check.constant} is not a literal"
    if strictly_equal(value, check.expected):
        return True, f"{check.constant} = {_described(value)}"
    return False, f"{check.constant} = {_described(value)}, expected {_described(check.expected)}"


def module_constant(tree: ast.Module, name: str) -> ast.expr | None:
    """The value of the last top-level `NAME = …` (or annotated) assignment."""
    value: ast.expr | None = None
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and any(
                isinstance(target, ast.Name) and target.id == name for target in statement.targets
            )
            or (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and statement.target.id == name
                and statement.value is not None
            )
        ):
            value = statement.value
    return value


def resolve_pointer(document: Any, pointer: str) -> tuple[bool, Any]:
    """RFC 6901: `/a/0/b~1c`; `""` is the whole document."""
    if pointer == "":
        return True, document
    value = document
    for token in pointer[1:].split("/"):
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and (key == "0" or key[0] != "0"):
            if int(key) >= len(value):
                return False, None
            value = value[int(key)]
        else:
            return False, None
    return True, value


def strictly_equal(left: Any, right: Any) -> bool:
    """Equal and of the same type all the way down (`True` is not `1`, `1` is not `1.0`)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(
            strictly_equal(left[key], right[key]) for key in left
        )
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(
            strictly_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    return bool(left == right)


def _shown(value: Any) -> str:
    return _short(json.dumps(value))


def _described(value: Any) -> str:
    """A Python value as source text; an integer too long for decimal (`0xfff…`) says so."""
    try:
        return _short(repr(value))
    except ValueError:
        return "an integer too long to show"


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:79] + "…"


def _command(check: PackageCheck, root: Path, grading: Grading) -> tuple[bool, str]:
    return run_command_check(
        check, grading.package, root, sandbox=grading.sandbox, hidden=grading.hidden
    )


GRADERS: dict[str, Callable[[PackageCheck, Path, Grading], tuple[bool, str]]] = {
    "command": _command,
    "json_value": _json_value,
    "path_absent": _absent,
    "path_exists": _exists,
    "python_constant": _python_constant,
    "text_equals": _text,
    "unchanged": _unchanged,
}

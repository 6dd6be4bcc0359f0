"""A task package (the tiny-llm course's `evals/week4` layout), read and checked before anything
runs, then staged into a private copy.

    PACKAGE/task.json                   schema_version 1, id, prompt, max_steps, editable_paths,
                                        and optionally allowed_commands (argv lists)
    PACKAGE/workspace/                  the files the run starts from
    PACKAGE/held_out_tests/checks.json  schema_version 1, checks: the held-out facts

A package is data, never code: it may hold no symlink, no executable file and nothing but
regular files and folders, and every check must name a path inside the workspace. Each refusal
is one sentence (`PackageError`), also for a package made to break the reader: JSON nested past
`MAX_JSON_DEPTH`, an integer past `MAX_INTEGER_DIGITS`, folders past `MAX_FOLDER_DEPTH`. Staging copies the workspace through descriptors opened
without following links, so the person's package is read, never changed, and never reached
through a link swapped in after the checks.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from ..files.files import READ_FLAGS
from ..files.tree_copy import LinkRefused, copy_tree

SCHEMA_VERSION = 1
MAX_JSON_BYTES = 1024 * 1024
MAX_JSON_DEPTH = 64  # lists and objects inside one another; grading compares them recursively
MAX_INTEGER_DIGITS = 4300  # the interpreter's own limit for decimal text
MAX_FOLDER_DEPTH = 100  # folders inside one another in the package
TASK_FIELDS = frozenset(
    {"schema_version", "id", "prompt", "max_steps", "editable_paths", "allowed_commands"}
)
TASK_REQUIRED = ("schema_version", "id", "prompt", "max_steps", "editable_paths")
COMMON_CHECK_FIELDS = ("type", "name", "path")
# Each check type and the fields it adds to type, name and path: the one table of them.
CHECK_TYPES: dict[str, tuple[str, ...]] = {
    "command": ("argv",),
    "json_value": ("pointer", "expected"),
    "path_absent": (),
    "path_exists": (),
    "python_constant": ("constant", "expected"),
    "text_equals": ("expected",),
    "unchanged": (),
}
# Fields a check type may leave out, with what leaving them out means.
OPTIONAL_CHECK_FIELDS: dict[str, tuple[str, ...]] = {"command": ("timeout_seconds",)}
DEFAULT_COMMAND_TIMEOUT_SECONDS = 60.0
MAX_COMMAND_TIMEOUT_SECONDS = 3600.0
CHECKS_FILE = "checks.json"
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class PackageError(ValueError):
    """A package that cannot be evaluated, said in one sentence."""


@dataclass(frozen=True)
class PackageCheck:
    """One held-out check; `expected`, `pointer` and `constant` as its type needs them; a
    `command` check's `argv` runs in the folder `path` ("." for the root) within
    `timeout_seconds`."""

    type: str
    name: str
    path: str
    expected: Any = None
    pointer: str | None = None
    constant: str | None = None
    argv: tuple[str, ...] = ()
    timeout_seconds: float = DEFAULT_COMMAND_TIMEOUT_SECONDS


@dataclass(frozen=True)
class TaskPackage:
    source: Path
    id: str
    prompt: str
    max_steps: int
    editable_paths: tuple[str, ...]
    allowed_commands: tuple[tuple[str, ...], ...]
    checks: tuple[PackageCheck, ...]  # sorted by name

    @property
    def workspace(self) -> Path:
        return self.source / "workspace"

    @property
    def held_out(self) -> Path:
        """The held-out folder: `checks.json`, and any files a `command` check runs against."""
        return self.source / "held_out_tests"

    def editable(self, path: str) -> bool:
        """Whether the package lets the run change `path` (an editable path or inside one)."""
        return any(
            path == allowed or path.startswith(allowed + "/") for allowed in self.editable_paths
        )


def load_package(source: str | Path) -> TaskPackage:
    """Read and check a package; raises PackageError with the first problem found."""
    root = Path(source)
    label = str(source)
    try:
        info = os.lstat(root)
    except OSError:
        raise PackageError(f"{label}: no such package folder") from None
    if stat.S_ISLNK(info.st_mode):
        raise PackageError(f"{label}: a package folder must not be a symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise PackageError(f"{label}: a package must be a folder")
    for name, kind in (
        ("task.json", "file"),
        ("workspace", "folder"),
        ("held_out_tests", "folder"),
    ):
        if not os.path.lexists(root / name):
            raise PackageError(f"{label}: a package needs {name} ({kind})")
    _check_tree(root, label)
    for name, want in (("task.json", stat.S_ISREG), ("workspace", stat.S_ISDIR)):
        if not want(os.lstat(root / name).st_mode):
            raise PackageError(
                f"{label}: {name} must be a {'file' if name.endswith('json') else 'folder'}"
            )
    checks_file = root / "held_out_tests" / CHECKS_FILE
    if not os.path.lexists(checks_file) or not stat.S_ISREG(os.lstat(checks_file).st_mode):
        raise PackageError(f"{label}: a package needs held_out_tests/checks.json (file)")
    task = _read_json(root / "task.json", f"{label}: task.json")
    package = _task(root, label, task)
    files = _workspace_files(root / "workspace", label)
    checks = _checks(
        _read_json(checks_file, f"{label}: checks.json"), f"{label}: checks.json", files
    )
    return replace(package, checks=checks)


def _check_tree(root: Path, label: str) -> None:
    """Everything in the package is a regular file or a folder, none of it executable, and
    no folder deeper than MAX_FOLDER_DEPTH (walked without recursion)."""
    for path, mode in _entries(root, label):
        shown = path.relative_to(root).as_posix()
        if stat.S_ISLNK(mode):
            raise PackageError(f"{label}: {shown} is a symlink; a package holds no links")
        if stat.S_ISDIR(mode):
            continue
        if not stat.S_ISREG(mode):
            raise PackageError(f"{label}: {shown} is not a regular file or a folder")
        if mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
            raise PackageError(
                f"{label}: {shown} is executable; a package holds no executable files"
            )


def _entries(root: Path, label: str) -> Iterator[tuple[Path, int]]:
    """Every entry under `root` with its lstat mode, folders before what they hold."""
    folders = [(root, 0)]
    while folders:
        folder, depth = folders.pop()
        try:
            names = sorted(os.listdir(folder))
        except OSError as error:
            shown = folder.relative_to(root).as_posix()
            raise PackageError(f"{label}: {shown} cannot be read: {error.strerror}") from None
        for name in names:
            path = folder / name
            mode = os.lstat(path).st_mode
            yield path, mode
            if stat.S_ISDIR(mode):
                if depth + 1 >= MAX_FOLDER_DEPTH:
                    shown = path.relative_to(root).parts[0]
                    raise PackageError(
                        f"{label}: {shown} holds folders more than {MAX_FOLDER_DEPTH} deep"
                    )
                folders.append((path, depth + 1))


def _read_json(path: Path, label: str) -> dict[str, Any]:
    def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        for key in keys:
            if keys.count(key) > 1:
                raise PackageError(f"{label} has the field {key!r} twice")
        return dict(pairs)

    def refuse_constant(name: str) -> None:
        raise PackageError(f"{label} holds {name}, which is not JSON")

    def bounded_integer(text: str) -> int:
        digits = len(text.lstrip("-"))
        if digits > MAX_INTEGER_DIGITS:
            raise PackageError(
                f"{label} holds an integer of {digits} digits (at most {MAX_INTEGER_DIGITS})"
            )
        return int(text)

    try:
        fd = os.open(path, READ_FLAGS)
        try:
            data = os.read(fd, MAX_JSON_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as error:
        raise PackageError(f"{label} cannot be read: {error.strerror or error}") from None
    if len(data) > MAX_JSON_BYTES:
        raise PackageError(f"{label} is larger than {MAX_JSON_BYTES} bytes")
    try:
        value = json.loads(
            data.decode("utf-8"),
            object_pairs_hook=refuse_duplicates,
            parse_constant=refuse_constant,
            parse_int=bounded_integer,
        )
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PackageError(f"{label} is not valid JSON: {error}") from None
    except RecursionError:
        raise PackageError(f"{label} is nested more than {MAX_JSON_DEPTH} deep") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise PackageError(f"{label} is nested more than {MAX_JSON_DEPTH} deep")
    if not isinstance(value, dict):
        raise PackageError(f"{label} must hold one JSON object")
    if type(value.get("schema_version")) is not int or value["schema_version"] != SCHEMA_VERSION:
        raise PackageError(f'{label} must say "schema_version": {SCHEMA_VERSION}')
    return value


def _depth(value: Any) -> int:
    """How many lists and objects lie inside one another in `value` (without recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        deepest = max(deepest, depth)
        pending += [(child, depth + 1) for child in children]
    return deepest


def _task(root: Path, label: str, task: dict[str, Any]) -> TaskPackage:
    where = f"{label}: task.json"
    extra = sorted(set(task) - TASK_FIELDS)
    if extra:
        raise PackageError(f"{where} has a field no task package has: {extra[0]!r}")
    missing = [name for name in TASK_REQUIRED if name not in task]
    if missing:
        raise PackageError(f"{where} needs the field {missing[0]!r}")
    task_id, prompt, max_steps = task["id"], task["prompt"], task["max_steps"]
    if not isinstance(task_id, str) or not _TASK_ID.match(task_id):
        raise PackageError(f"{where}: id must be letters, digits, '.', '_' or '-' (at most 100)")
    if not isinstance(prompt, str) or not prompt.strip():
        raise PackageError(f"{where}: prompt must be non-empty text")
    if type(max_steps) is not int or not 0 < max_steps <= 1000:
        raise PackageError(f"{where}: max_steps must be an integer from 1 to 1000")
    editable = task["editable_paths"]
    if not isinstance(editable, list):
        raise PackageError(f"{where}: editable_paths must be a list of paths")
    paths = tuple(_relative_path(item, f"{where}: editable path") for item in editable)
    for index, path in enumerate(paths):
        for other in paths[index + 1 :]:
            if path == other or other.startswith(path + "/") or path.startswith(other + "/"):
                raise PackageError(f"{where}: editable paths {path!r} and {other!r} overlap")
    commands = task.get("allowed_commands", [])
    if not isinstance(commands, list) or not all(
        isinstance(argv, list)
        and argv
        and all(isinstance(part, str) and part and "\0" not in part for part in argv)
        for argv in commands
    ):
        raise PackageError(f"{where}: allowed_commands must be a list of argv lists of text")
    return TaskPackage(
        root, task_id, prompt, max_steps, paths, tuple(tuple(argv) for argv in commands), ()
    )


def _relative_path(value: object, what: str) -> str:
    """A path inside the workspace, as text: relative, no `..`, no empty or `.` parts."""
    if not isinstance(value, str) or not value or "\0" in value or "\\" in value:
        raise PackageError(f"{what} must be a relative path: {value!r}")
    path = PurePosixPath(value)
    if (
        path.is_absolute()
        or any(part in ("..", ".") for part in value.split("/"))
        or not path.parts
    ):
        raise PackageError(f"{what} must stay inside the workspace: {value!r}")
    if "" in value.split("/"):
        raise PackageError(f"{what} must be a relative path: {value!r}")
    return path.as_posix()


def _workspace_files(workspace: Path, label: str) -> frozenset[str]:
    return frozenset(
        path.relative_to(workspace).as_posix()
        for path, mode in _entries(workspace, label)
        if not stat.S_ISDIR(mode)
    )


def _checks(
    document: dict[str, Any], where: str, files: frozenset[str]
) -> tuple[PackageCheck, ...]:
    extra = sorted(set(document) - {"schema_version", "checks"})
    if extra:
        raise PackageError(f"{where} has a field no checks file has: {extra[0]!r}")
    raw = document.get("checks")
    if not isinstance(raw, list) or not raw:
        raise PackageError(f"{where} needs a non-empty list of checks")
    checks = [_check(item, where, files) for item in raw]
    names = [check.name for check in checks]
    for name in names:
        if names.count(name) > 1:
            raise PackageError(f"{where}: two checks are named {name!r}")
    return tuple(sorted(checks, key=lambda check: check.name))


def _check(item: object, where: str, files: frozenset[str]) -> PackageCheck:
    if not isinstance(item, dict):
        raise PackageError(f"{where}: each check must be a JSON object")
    kind = item.get("type")
    if kind not in CHECK_TYPES:
        known = ", ".join(sorted(CHECK_TYPES))
        raise PackageError(f"{where}: unknown check type {kind!r} (known: {known})")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise PackageError(f"{where}: every check needs a non-empty name")
    fields = (*COMMON_CHECK_FIELDS, *CHECK_TYPES[kind])
    extra = sorted(set(item) - set(fields) - set(OPTIONAL_CHECK_FIELDS.get(kind, ())))
    if extra:
        raise PackageError(f"{where}: check {name!r} has a field its type has not: {extra[0]!r}")
    missing = [field for field in fields if field not in item]
    if missing:
        raise PackageError(f"{where}: check {name!r} needs the field {missing[0]!r}")
    if kind == "command":
        return _command_check(item, where, name)
    path = _relative_path(item["path"], f"{where}: check {name!r} path")
    if kind == "unchanged" and path not in files:
        raise PackageError(f"{where}: check {name!r} names {path!r}, not a file in the workspace")
    pointer, constant = item.get("pointer"), item.get("constant")
    if kind == "json_value" and (
        not isinstance(pointer, str) or (pointer and not pointer.startswith("/"))
    ):
        raise PackageError(f"{where}: check {name!r} pointer must be a JSON pointer ('/a/0')")
    if kind == "python_constant" and (not isinstance(constant, str) or not constant.isidentifier()):
        raise PackageError(f"{where}: check {name!r} constant must be a Python name")
    if kind == "text_equals" and not isinstance(item["expected"], str):
        raise PackageError(f"{where}: check {name!r} expected must be text")
    return PackageCheck(kind, name, path, item.get("expected"), pointer, constant)


def _command_check(item: dict[str, Any], where: str, name: str) -> PackageCheck:
    """A held-out command: an argv (no shell) run in the folder `path` ("." for the root)."""
    raw_path = item["path"]
    path = "." if raw_path == "." else _relative_path(raw_path, f"{where}: check {name!r} path")
    argv = item["argv"]
    if (
        not isinstance(argv, list)
        or not argv
        or not all(isinstance(part, str) and part and "\0" not in part for part in argv)
    ):
        raise PackageError(
            f"{where}: check {name!r} argv must be a non-empty list of non-empty strings"
        )
    timeout = item.get("timeout_seconds", DEFAULT_COMMAND_TIMEOUT_SECONDS)
    if (
        not isinstance(timeout, (int, float))
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_COMMAND_TIMEOUT_SECONDS
    ):
        raise PackageError(
            f"{where}: check {name!r} timeout_seconds must be a number of seconds from above 0"
            f" to {MAX_COMMAND_TIMEOUT_SECONDS:g}"
        )
    return PackageCheck("command", name, path, argv=tuple(argv), timeout_seconds=float(timeout))


def stage_workspace(package: TaskPackage, destination: Path) -> None:
    """Copy the package's workspace into `destination` (a new folder), refusing any link met
    on the way; files are written without executable bits."""
    try:
        copy_tree(package.workspace, destination)
    except LinkRefused as error:
        raise PackageError(f"{package.id}: {error}") from None

"""The documents name only modules that exist: a module moved or removed fails here until the
documents follow it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import counterfoil
from counterfoil.cli.main import build_parser

REPOSITORY = Path(__file__).resolve().parents[2]
SERVER = REPOSITORY / "server"
PACKAGE = SERVER / "counterfoil"
DOCUMENTS = sorted([*(REPOSITORY / "docs").glob("*.md"), REPOSITORY / "README.md"])
FOLDERS = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
# `counterfoil.allowWrites`, `counterfoil.runAgent`: the editor's settings, commands and context
# keys, named in the extension's manifest, are not modules.
EDITOR_NAMES = set(
    re.findall(r"counterfoil\.(\w+)", (REPOSITORY / "extension" / "package.json").read_text())
)

DOTTED = re.compile(r"(?<![\w./-])counterfoil(?:\.\w+)+")
SERVER_PATH = re.compile(r"server/counterfoil/[\w/.]+")
# `gate/workspace.py`, `gate/files.replace_file`, `commands/tree/` inside backticks.
PACKAGE_PATH = re.compile(r"`((?:\w+/)+\w*(?:\.\w+)?)`")
# `tests/lsp/test_server.py`, `bench/eval.py`, `scripts/test.sh`: the repository's own files.
REPOSITORY_PATH = re.compile(r"(?<![\w./-])((?:tests|bench|scripts|fixtures)/[\w/.-]*[\w/])")
# `counterfoil agent …`, `counterfoil receipts verify` inside backticks: a subcommand.
SUBCOMMAND = re.compile(r"`counterfoil ([a-z][a-z-]*)")


def module_file(parts: list[str]) -> Path | None:
    path = SERVER.joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def defines(source: Path, name: str) -> bool:
    """Whether `source` defines or imports `name` (the package root: a public name)."""
    if source == PACKAGE / "__init__.py":
        return name in (*counterfoil.__all__, "__version__")
    text = source.read_text(encoding="utf-8")
    pattern = (
        rf"^\s*(?:def|class|async def)\s+{name}\b|^\s*{name}\s*[:=]"
        rf"|^from \S+ import [^\n]*\b{name}\b|^\s+{name},$"
    )
    return re.search(pattern, text, re.MULTILINE) is not None


def dotted_problem(name: str) -> str | None:
    """`counterfoil.a.b` must be a module; `counterfoil.a.b.Name` a name module a.b defines."""
    parts = name.split(".")
    if parts[1] in EDITOR_NAMES and module_file(parts[:2]) is None:
        return None
    for end in range(len(parts), 0, -1):
        found = module_file(parts[:end])
        if found is None:
            continue
        rest = parts[end:]
        if not rest or defines(found, rest[0]):
            return None
        return f"{name}: {'.'.join(parts[:end])} defines no {rest[0]}"
    return f"{name}: no such module"


def package_path_problem(text: str) -> str | None:
    """A backticked path that starts with a package folder names a file or folder there."""
    parts = text.rstrip("/").split("/")
    if parts[0] not in FOLDERS:
        return None
    last = parts[-1]
    if text.endswith("/") or "." not in last:
        return None if PACKAGE.joinpath(*parts).is_dir() else f"{text}: no such folder"
    stem, _, suffix = last.partition(".")
    if suffix in ("py", "c"):
        return None if PACKAGE.joinpath(*parts).is_file() else f"{text}: no such file"
    # `gate/workspace.Workspace`: a module, then a name it defines
    source = PACKAGE.joinpath(*parts[:-1], f"{stem}.py")
    if not source.is_file():
        return f"{text}: no such module"
    return None if defines(source, suffix.split(".")[0]) else f"{text}: defines no {suffix}"


def subcommands() -> set[str]:
    """The terminal's subcommands, read from its parser."""
    actions = build_parser()._subparsers._group_actions  # type: ignore[union-attr]
    return {name for action in actions for name in action.choices}


# Where a document's relative paths may start: the repository, the extension (its own
# `scripts/`), the demo project (its `tests/`).
PATH_BASES = (REPOSITORY, REPOSITORY / "extension", REPOSITORY / "fixtures" / "demo-project")


def repository_path_problem(text: str) -> str | None:
    """A path under `tests/`, `bench/`, `scripts/` or `fixtures/` names what is there; a glob or a
    placeholder (`tests/<name>.py`) is left alone."""
    if any(mark in text for mark in "*<>{}"):
        return None
    if any((base / text).exists() for base in PATH_BASES):
        return None
    return f"{text}: no such file or folder"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_repository_path_and_subcommand_a_document_names_exists(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    known = subcommands() | {"serve"}
    problems = sorted(
        {
            problem
            for path in REPOSITORY_PATH.findall(text)
            if (problem := repository_path_problem(path))
        }
        | {
            f"counterfoil {name}: no such subcommand"
            for name in SUBCOMMAND.findall(text)
            if name not in known
        }
    )

    assert problems == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_module_a_document_names_exists(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    problems = sorted(
        {problem for name in DOTTED.findall(text) if (problem := dotted_problem(name))}
        | {
            f"{path}: no such file"
            for path in SERVER_PATH.findall(text)
            if not (REPOSITORY / path.rstrip(".")).exists()
        }
        | {
            problem
            for path in PACKAGE_PATH.findall(text)
            if (problem := package_path_problem(path))
        }
    )

    assert problems == []


def test_the_checker_finds_a_moved_module() -> None:
    assert dotted_problem("counterfoil.gate.workspace.Workspace") is None
    assert (
        dotted_problem("counterfoil.gate.files")
        == "counterfoil.gate.files: counterfoil.gate defines no files"
    )
    assert (
        dotted_problem("counterfoil.nothing")
        == "counterfoil.nothing: counterfoil defines no nothing"
    )
    assert package_path_problem("files/files.py") is None
    assert package_path_problem("gate/files.py") == "gate/files.py: no such file"
    assert (
        package_path_problem("gate/workspace.Nothing")
        == "gate/workspace.Nothing: defines no Nothing"
    )


def test_the_checker_finds_a_moved_test_file_and_an_unknown_subcommand() -> None:
    assert repository_path_problem("tests/support/hub_server.py") is None
    assert (
        repository_path_problem("tests/hub_server.py")
        == "tests/hub_server.py: no such file or folder"
    )
    assert "eval" in subcommands()
    assert "evidence" not in subcommands()

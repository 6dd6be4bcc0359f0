"""The tests mirror the package: a test lives in the folder of the unit whose behaviour it
specifies — `tests/<folder>/` for `server/counterfoil/<folder>/`, `tests/core/` for the
top-level modules — beside a few folders that are not a unit (TIERS); and the tests build a
`Workspace` one way, through `tests/support/workspaces.py`, except where the constructor itself
is what the test is about."""

from __future__ import annotations

import ast
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
TESTS = REPOSITORY / "tests"
PACKAGE = REPOSITORY / "server" / "counterfoil"

# The test folders that are not a folder of the package, and what each holds.
TIERS = {
    "core": "the top-level modules: the shared facts, the loop, the course's surface",
    "architecture": "the package's layout, its folder order and the documents that describe it",
    "support": "helpers the tests share, the one workspace factory among them",
    "course": "the course's own tests, unchanged",
    "real_model": "a real model end to end, slow",
    "benches": "every bench with --quick",
}

# Where a test calls `Workspace(…)` itself: the factory, and the tests of the constructor as
# the course's API has it (tests/course/ as a whole: the course's tests stay as they are).
CONSTRUCTOR_CALLS = {
    ("support/workspaces.py", "make_workspace"),
    ("gate/test_tools_offered.py", "test_constructor_keeps_policy_callback_and_store"),
    ("gate/test_tools_offered.py", "test_missing_store_means_a_fresh_in_memory_store"),
    ("core/test_scripted_cycle.py", "test_scripted_cycle_edits_validates_and_records"),
}


def test_each_test_folder_is_a_package_folder_or_a_named_tier() -> None:
    units = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    folders = {
        path.name
        for path in TESTS.iterdir()
        if path.is_dir() and not path.name.startswith((".", "__"))
    }
    assert sorted(folders - units - TIERS.keys()) == []
    assert sorted(TIERS.keys() & units) == []


def workspace_calls(path: Path) -> list[tuple[str, int]]:
    """(the top-level function it is in, line) of each `Workspace(…)` call in one file."""
    calls = []
    for top in ast.parse(path.read_text(encoding="utf-8")).body:
        name = getattr(top, "name", "")
        for node in ast.walk(top):
            if not isinstance(node, ast.Call):
                continue
            called = node.func
            if (isinstance(called, ast.Name) and called.id == "Workspace") or (
                isinstance(called, ast.Attribute) and called.attr == "Workspace"
            ):
                calls.append((name, node.lineno))
    return calls


def test_the_tests_build_a_workspace_through_the_one_factory() -> None:
    direct = []
    for path in sorted(TESTS.rglob("*.py")):
        relative = path.relative_to(TESTS).as_posix()
        if relative.startswith("course/"):
            continue
        for function, line in workspace_calls(path):
            if (relative, function) not in CONSTRUCTOR_CALLS:
                direct.append(f"tests/{relative}:{line} (use tests.support.workspaces)")
    assert direct == []


def test_the_allowed_constructor_calls_are_still_there() -> None:
    found = {
        (relative, function)
        for relative, _ in CONSTRUCTOR_CALLS
        for function, _ in workspace_calls(TESTS / relative)
    }
    assert sorted(CONSTRUCTOR_CALLS - found) == []

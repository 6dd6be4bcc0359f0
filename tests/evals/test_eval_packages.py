"""Task packages: each bad package is refused with one sentence before anything runs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from counterfoil import ReceiptStore, ToolAction
from counterfoil.evals.grading import GRADERS, strictly_equal
from counterfoil.evals.package import CHECK_TYPES, PackageError, load_package, stage_workspace
from counterfoil.evals.runner import package_workspace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
COURSE_TASKS = ("failure-recovery", "localized-constant", "repository-convention")


def _package(tmp_path: Path, name: str = "release-notes") -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def _edit_json(path: Path, change: object) -> None:
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("name", [*COURSE_TASKS, "release-notes"])
def test_every_fixture_package_loads(name: str) -> None:
    package = load_package(FIXTURES / name)

    assert package.id == name
    assert [check.name for check in package.checks] == sorted(c.name for c in package.checks)


def test_the_fixture_packages_use_every_check_type_and_a_command() -> None:
    packages = [load_package(FIXTURES / name) for name in [*COURSE_TASKS, "release-notes"]]

    assert {check.type for p in packages for check in p.checks} == set(CHECK_TYPES)
    assert any(package.allowed_commands for package in packages)


def test_a_symlink_in_the_package_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    os.symlink("/etc/passwd", package / "workspace" / "link.txt")

    with pytest.raises(PackageError, match="link.txt is a symlink"):
        load_package(package)


def test_an_executable_file_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    (package / "workspace" / "greet.py").chmod(0o755)

    with pytest.raises(PackageError, match="greet.py is executable"):
        load_package(package)


def test_a_check_that_leaves_the_workspace_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    checks = package / "held_out_tests" / "checks.json"
    _edit_json(checks, lambda data: data["checks"][0].update(path="../task.json"))

    with pytest.raises(PackageError, match="must stay inside the workspace"):
        load_package(package)


def test_an_unknown_check_type_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    checks = package / "held_out_tests" / "checks.json"
    _edit_json(checks, lambda data: data["checks"][0].update(type="run_pytest"))

    with pytest.raises(PackageError, match="unknown check type 'run_pytest'"):
        load_package(package)


def test_overlapping_editable_paths_are_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _edit_json(package / "task.json", lambda data: data.update(editable_paths=["src", "src/a.py"]))

    with pytest.raises(PackageError, match="'src' and 'src/a.py' overlap"):
        load_package(package)


def test_an_extra_task_field_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _edit_json(package / "task.json", lambda data: data.update(timeout=5))

    with pytest.raises(PackageError, match="has a field no task package has: 'timeout'"):
        load_package(package)


def test_another_schema_version_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _edit_json(package / "task.json", lambda data: data.update(schema_version=2))

    with pytest.raises(PackageError, match='"schema_version": 1'):
        load_package(package)


def test_a_missing_checks_file_is_refused(tmp_path: Path) -> None:
    package = _package(tmp_path)
    (package / "held_out_tests" / "checks.json").unlink()

    with pytest.raises(PackageError, match="needs held_out_tests/checks.json"):
        load_package(package)


def test_an_unchanged_check_must_name_a_workspace_file(tmp_path: Path) -> None:
    package = _package(tmp_path)
    checks = package / "held_out_tests" / "checks.json"
    _edit_json(
        checks,
        lambda data: data["checks"].append(
            {"type": "unchanged", "name": "ghost", "path": "ghost.txt"}
        ),
    )

    with pytest.raises(PackageError, match="'ghost.txt', not a file in the workspace"):
        load_package(package)


def test_staging_copies_the_workspace_and_leaves_the_package_alone(tmp_path: Path) -> None:
    source = _package(tmp_path)
    package = load_package(source)
    before = {p: p.read_bytes() for p in source.rglob("*") if p.is_file()}

    stage_workspace(package, tmp_path / "stage")

    assert (tmp_path / "stage" / "greet.py").read_bytes() == (
        source / "workspace/greet.py"
    ).read_bytes()
    assert not (tmp_path / "stage" / "task.json").exists()
    assert not (tmp_path / "stage" / "held_out_tests").exists()
    assert {p: p.read_bytes() for p in source.rglob("*") if p.is_file()} == before


def test_staging_refuses_a_symlink_swapped_in_after_the_checks(tmp_path: Path) -> None:
    source = _package(tmp_path)
    package = load_package(source)
    os.symlink("/etc/passwd", source / "workspace" / "late.txt")

    with pytest.raises(PackageError, match="late.txt is not a regular file"):
        stage_workspace(package, tmp_path / "stage")


def test_values_compare_type_strictly() -> None:
    assert strictly_equal({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not strictly_equal(1, 1.0)
    assert not strictly_equal(True, 1)
    assert not strictly_equal([1], [True])


def test_every_check_type_the_loader_accepts_has_a_grader() -> None:
    assert set(GRADERS) == set(CHECK_TYPES)


def test_a_write_the_package_allows_is_receipted_as_approved_by_the_task_package(
    tmp_path: Path,
) -> None:
    package = load_package(FIXTURES / "release-notes")
    stage_workspace(package, tmp_path / "stage")
    store = ReceiptStore(tmp_path / "receipts.jsonl")
    workspace = package_workspace(package, tmp_path / "stage", store)

    allowed = workspace.execute(ToolAction("write_file", {"path": "CHANGELOG.md", "content": "x"}))

    assert allowed == "wrote CHANGELOG.md"
    assert [r.evidence.approval.via for r in store.receipts()] == ["task package"]


def test_a_write_outside_the_packages_editable_paths_is_refused_by_its_rule_not_rejected(
    tmp_path: Path,
) -> None:
    package = load_package(FIXTURES / "release-notes")
    stage_workspace(package, tmp_path / "stage")
    store = ReceiptStore(tmp_path / "receipts.jsonl")
    workspace = package_workspace(package, tmp_path / "stage", store)

    step = workspace.execute_step(ToolAction("write_file", {"path": "other.md", "content": "x"}))

    assert step.observation == (
        "error: not editable: other.md; this task allows changes only to: "
        "CHANGELOG.md, greet.py, version.py"
    )
    assert [o.state for o in workspace.effect_outcomes] == ["refused"]
    assert store.receipts() == ()

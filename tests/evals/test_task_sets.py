"""The tuning and held-out task sets: every package loads, its solving script passes it, and
the workspace as the package leaves it fails it (a package nothing can fail measures nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfoil.commands.tree.sandbox import OFF
from counterfoil.evals.grading import grade
from counterfoil.evals.package import load_package, stage_workspace
from counterfoil.evals.runner import run_task
from counterfoil.files.tree_copy import snapshot
from counterfoil.loop import AgentLimits
from counterfoil.models import ScriptedModel

EVALS = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
SETS = ("tuning", "held-out")
PACKAGES = sorted(path.parent for name in SETS for path in (EVALS / name).glob("*/task.json"))


def _label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("name", SETS)
def test_each_set_has_at_least_eight_packages(name: str) -> None:
    assert len(list((EVALS / name).glob("*/task.json"))) >= 8


def test_no_task_id_is_in_two_sets_or_in_the_fixtures() -> None:
    ids = [load_package(path).id for path in PACKAGES]
    fixtures = {path.parent.name for path in EVALS.glob("*/task.json")}

    assert len(ids) == len(set(ids))
    assert not fixtures & set(ids)


@pytest.mark.parametrize("package_path", PACKAGES, ids=_label)
def test_the_solving_script_passes_the_package(package_path: Path) -> None:
    package = load_package(package_path)
    script = package_path.parent / "scripts" / "solve" / f"{package.id}.jsonl"

    run = run_task(
        package,
        ScriptedModel.from_file(script),
        limits=AgentLimits(check_final_answer=True),
        sandbox=OFF,  # the packages' own scripts: confinement is tested with the fixtures
    )

    assert run.reason == "completed", run
    assert run.status == "passed", [c for c in run.checks if not c.passed]


@pytest.mark.parametrize("package_path", PACKAGES, ids=_label)
def test_the_untouched_workspace_fails_a_check(package_path: Path, tmp_path: Path) -> None:
    package = load_package(package_path)
    root = tmp_path / "workspace"
    stage_workspace(package, root)

    checks = grade(package, root, snapshot(root), sandbox=OFF)

    assert not all(check.passed for check in checks)

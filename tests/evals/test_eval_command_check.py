"""A `command` check: a held-out program run after the run, confined in a copy of what the run
left with the package's held-out files, that must exit 0."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from counterfoil.commands.tree.sandbox import CONFINE, OFF
from counterfoil.evals.grading import grade
from counterfoil.evals.package import PackageError, load_package
from counterfoil.files.tree_copy import snapshot

needs_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="confine on Linux needs bubblewrap (apt-get install bubblewrap)",
)


def package_with(
    tmp_path: Path, *checks: dict[str, object], held: dict[str, str] | None = None
) -> Path:
    root = tmp_path / "task"
    (root / "workspace").mkdir(parents=True)
    (root / "held_out_tests").mkdir()
    (root / "workspace" / "app.py").write_text("VALUE = 1\n")
    task = {"schema_version": 1, "id": "t", "prompt": "p", "max_steps": 2, "editable_paths": []}
    (root / "task.json").write_text(json.dumps(task))
    document = {"schema_version": 1, "checks": list(checks)}
    (root / "held_out_tests" / "checks.json").write_text(json.dumps(document))
    for name, text in (held or {}).items():
        (root / "held_out_tests" / name).write_text(text)
    return root


def command(argv: list[str], **more: object) -> dict[str, object]:
    return {"type": "command", "name": "held-out", "path": ".", "argv": argv, **more}


def staged(tmp_path: Path, package: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(package / "workspace", root)
    return root


def graded(tmp_path: Path, package_root: Path, sandbox: str = OFF) -> tuple[bool, str]:
    package = load_package(package_root)
    root = staged(tmp_path, package_root)
    (result,) = grade(package, root, snapshot(root), sandbox=sandbox)
    return result.passed, result.detail


PYTHON = sys.executable


def test_a_command_check_loads_with_its_argv_and_default_timeout(tmp_path: Path) -> None:
    (check,) = load_package(package_with(tmp_path, command(["python3", "t.py"]))).checks

    assert (check.type, check.path, check.argv, check.timeout_seconds) == (
        "command",
        ".",
        ("python3", "t.py"),
        60.0,
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"argv": []}, "argv must be a non-empty list"),
        ({"argv": "python3 t.py"}, "argv must be a non-empty list"),
        ({"timeout_seconds": 0}, "timeout_seconds must be a number"),
        ({"timeout_seconds": True}, "timeout_seconds must be a number"),
        ({"shell": True}, "has a field its type has not: 'shell'"),
        ({"path": "../up"}, "must stay inside the workspace"),
    ],
)
def test_a_bad_command_check_is_refused(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    with pytest.raises(PackageError, match=message):
        load_package(package_with(tmp_path, {**command(["python3", "t.py"]), **change}))


def test_a_held_out_test_that_exits_0_passes(tmp_path: Path) -> None:
    test = "from app import VALUE\nassert VALUE == 1, VALUE\n"
    package = package_with(tmp_path, command([PYTHON, "test_held.py"]), held={"test_held.py": test})

    assert graded(tmp_path, package) == (True, "exit status 0")


def test_a_held_out_test_that_fails_says_its_status_and_output(tmp_path: Path) -> None:
    test = "from app import VALUE\nassert VALUE == 2, f'VALUE is {VALUE}'\n"
    package = package_with(tmp_path, command([PYTHON, "test_held.py"]), held={"test_held.py": test})

    passed, detail = graded(tmp_path, package)

    assert not passed
    assert detail.startswith("exit status 1: ") and detail.endswith("AssertionError: VALUE is 1")


def test_a_command_past_its_timeout_fails(tmp_path: Path) -> None:
    check = command([PYTHON, "-c", "import time; time.sleep(30)"], timeout_seconds=0.5)

    passed, detail = graded(tmp_path, package_with(tmp_path, check))

    assert (passed, detail) == (False, "timed out after 0.5 s")


def test_the_command_changes_only_a_copy_of_the_run(tmp_path: Path) -> None:
    write = "open('app.py', 'w').write('changed'); open('new.txt', 'w').write('x')"
    package_root = package_with(tmp_path, command([PYTHON, "-c", write]))
    package = load_package(package_root)
    root = staged(tmp_path, package_root)

    grade(package, root, snapshot(root), sandbox=OFF)

    assert sorted(path.name for path in root.iterdir()) == ["app.py"]
    assert (root / "app.py").read_text() == "VALUE = 1\n"
    assert "test_held.py" not in {path.name for path in root.iterdir()}


@needs_bubblewrap
def test_a_confined_command_has_no_network(tmp_path: Path) -> None:
    connect = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
        "except OSError:\n"
        "    raise SystemExit(0)\n"
        "raise SystemExit(1)\n"
    )
    package = package_with(tmp_path, command([PYTHON, "t.py"]), held={"t.py": connect})

    assert graded(tmp_path, package, sandbox=CONFINE) == (True, "exit status 0")


@needs_bubblewrap
def test_a_confined_command_cannot_read_the_package(tmp_path: Path) -> None:
    package_root = package_with(tmp_path, command([PYTHON, "t.py"]))
    look = f"import pathlib\nraise SystemExit(int(pathlib.Path({str(package_root / 'task.json')!r}).exists()))\n"
    (package_root / "held_out_tests" / "t.py").write_text(look)

    assert graded(tmp_path, package_root, sandbox=CONFINE) == (True, "exit status 0")


@needs_bubblewrap
def test_a_package_named_by_a_relative_path_is_hidden_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package_with(tmp_path, command([PYTHON, "-c", "pass"]))
    monkeypatch.chdir(tmp_path)

    assert graded(tmp_path, Path("task"), sandbox=CONFINE) == (True, "exit status 0")


def test_a_held_out_file_in_a_folder_the_run_lacks_is_placed_there(tmp_path: Path) -> None:
    test = "from app import VALUE\nassert VALUE == 1, VALUE\n"
    package = package_with(tmp_path, command([PYTHON, "-m", "tests.test_held"]))
    (package / "held_out_tests" / "tests").mkdir()
    (package / "held_out_tests" / "tests" / "test_held.py").write_text(test)

    assert graded(tmp_path, package) == (True, "exit status 0")


def test_a_folder_the_run_left_as_a_symlink_never_leads_a_held_out_file_outside_the_copy(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_held.py").write_text("precious\n")
    package_root = package_with(tmp_path, command([PYTHON, "-c", "pass"]))
    (package_root / "held_out_tests" / "tests").mkdir()
    (package_root / "held_out_tests" / "tests" / "test_held.py").write_text("held out\n")
    package = load_package(package_root)
    root = staged(tmp_path, package_root)
    (root / "tests").symlink_to(outside)

    (result,) = grade(package, root, snapshot(root), sandbox=OFF)

    assert (outside / "test_held.py").read_text() == "precious\n"
    assert sorted(path.name for path in outside.iterdir()) == ["test_held.py"]
    assert not result.passed
    assert result.detail.startswith("could not be decided: the held-out tests/test_held.py ")

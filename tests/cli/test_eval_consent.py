"""A package is data, but its commands are programs: `counterfoil eval` shows them and asks once
before anything runs (`--yes` for CI), and runs them only in a sandbox (`--unconfined` where
none can be had)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from counterfoil.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
RELEASE_NOTES = str(FIXTURES / "release-notes")
SOLVE = f"scripted:{FIXTURES / 'scripts' / 'solve'}"


def _eval(*arguments: str, stdin: io.TextIOBase | None = None) -> tuple[int, str]:
    stdout = io.StringIO()
    status = main(["eval", *arguments], stdin=stdin, stdout=stdout)  # type: ignore[arg-type]
    return status, stdout.getvalue()


@pytest.fixture
def terminal_answering() -> Iterator[Callable[[str], io.TextIOBase]]:
    """A terminal (a pseudo-terminal's far end) on which the person has typed an answer."""
    opened: list[int] = []

    def terminal(answer: str) -> io.TextIOBase:
        leader, follower = os.openpty()
        opened.extend((leader, follower))
        os.write(leader, answer.encode())
        return os.fdopen(follower, "r", closefd=False)  # type: ignore[return-value]

    yield terminal
    for descriptor in opened:
        os.close(descriptor)


def test_without_a_terminal_or_yes_the_commands_are_shown_and_nothing_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, output = _eval(RELEASE_NOTES, "--model", SOLVE, stdin=io.StringIO(""))

    assert status == 2
    assert output == (
        "error: the packages' commands need your yes: run on a terminal, or pass --yes\n"
    )
    assert "  release-notes: python3 test_greet.py\n" in capsys.readouterr().err


def test_yes_prints_the_commands_and_runs_the_evaluation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, output = _eval(RELEASE_NOTES, "--model", SOLVE, "--yes", stdin=io.StringIO(""))

    assert status == 0
    assert output.rstrip().endswith("overall: passed")
    shown = capsys.readouterr().err
    assert "release-notes: python3 test_greet.py" in shown
    assert "(confined to each run's copy)" in shown


def test_a_person_on_a_terminal_is_asked_once_and_yes_runs_it(
    terminal_answering: Callable[[str], io.TextIOBase], capsys: pytest.CaptureFixture[str]
) -> None:
    status, output = _eval(RELEASE_NOTES, "--model", SOLVE, stdin=terminal_answering("y\n"))

    assert status == 0
    assert output.rstrip().endswith("overall: passed")
    assert capsys.readouterr().err.count("Run the evaluation? [y/N] ") == 1


def test_a_person_on_a_terminal_who_does_not_say_yes_stops_it(
    terminal_answering: Callable[[str], io.TextIOBase], capsys: pytest.CaptureFixture[str]
) -> None:
    status, output = _eval(RELEASE_NOTES, "--model", SOLVE, stdin=terminal_answering("\n"))

    assert status == 2
    assert output == "error: not evaluated: the packages' commands were not approved\n"
    assert capsys.readouterr().err.endswith("Run the evaluation? [y/N] ")


def test_packages_without_commands_are_not_asked_about() -> None:
    package = str(FIXTURES / "localized-constant")

    status, _output = _eval(package, "--model", SOLVE, stdin=io.StringIO(""))

    assert status == 0


def test_a_commands_code_is_shown_whole_on_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "code"
    shutil.copytree(FIXTURES / "release-notes", package)
    task = json.loads((package / "task.json").read_text())
    task["allowed_commands"] = [["python3", "-c", "import os\nos.remove('x')"]]
    (package / "task.json").write_text(json.dumps(task))

    _eval(str(package), "--model", SOLVE, stdin=io.StringIO(""))

    shown = capsys.readouterr().err.splitlines()
    assert "  release-notes: python3 -c 'import os\\x0aos.remove('\"'\"'x'\"'\"')'" in shown


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")
def test_where_no_sandbox_can_be_had_the_evaluation_is_refused_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it

    status, output = _eval(RELEASE_NOTES, "--model", SOLVE, "--yes")

    assert status == 2
    assert output.startswith(
        "error: a package's commands and command checks run only in a sandbox, and none can"
    )
    assert output.endswith("pass --unconfined to run them without one\n")
    assert output.count("\n") == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")
def test_a_package_whose_only_program_is_a_command_check_is_refused_too_where_none_can_be_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its check would fail with the sandbox's error, and the task would count as failed."""
    checked = FIXTURES / "tuning" / "readme-flag"
    assert not json.loads((checked / "task.json").read_text()).get("allowed_commands")
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it

    status, output = _eval(str(checked), "--model", SOLVE, "--yes")

    assert status == 2
    assert "command checks run only in a sandbox, and none can be had here" in output


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")
def test_a_package_that_runs_no_program_runs_where_no_sandbox_can_be_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = FIXTURES / "failure-recovery"
    checks = json.loads((plain / "held_out_tests" / "checks.json").read_text())["checks"]
    assert all(check["type"] != "command" for check in checks)
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it

    status, output = _eval(str(plain), "--model", SOLVE, "--yes")

    assert status == 0, output
    assert output.rstrip().endswith("overall: passed")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")
def test_the_bench_runs_nothing_where_the_packages_commands_cannot_run_confined(
    tmp_path: Path,
) -> None:
    """A figure where every command failed for the machine would be counted as the model's."""
    (tmp_path / "python3").symlink_to(sys.executable)
    bench = FIXTURES.parents[1] / "bench"
    done = subprocess.run(
        [sys.executable, "eval.py", "--model", SOLVE, "--set", "fixtures", "--no-peer"],
        cwd=bench,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(tmp_path), "HF_HUB_OFFLINE": "1"},
        check=False,
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("error: a package's commands and command checks run only in")
    assert done.stderr.endswith("; nothing was run\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")
def test_unconfined_runs_the_commands_without_a_sandbox_when_the_person_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(tmp_path))  # python3, but no bwrap

    status, output = _eval(RELEASE_NOTES, "--model", SOLVE, "--yes", "--unconfined")

    assert status == 0
    assert output.rstrip().endswith("overall: passed")
    assert "(UNCONFINED, as you)" in capsys.readouterr().err

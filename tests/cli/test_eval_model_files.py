"""What a model leaves in its copy is graded, never obeyed: a file no parser can take fails its
check with the reason and every other task keeps its result; a protected file turned into a
folder is a forbidden change; a file name cannot write lines of its own into the table."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from counterfoil.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
SOLVE = FIXTURES / "scripts" / "solve"


def _eval(*arguments: str) -> tuple[int, str]:
    stdout = io.StringIO()
    status = main(["eval", *arguments, "--yes"], stdout=stdout)
    return status, stdout.getvalue()


def _scripts(folder: Path, **scripts: list[dict[str, object]]) -> str:
    """A scripted-model folder: the solving script for each fixture task, but these."""
    shutil.copytree(SOLVE, folder)
    for task, responses in scripts.items():
        lines = "".join(json.dumps(response) + "\n" for response in responses)
        (folder / f"{task.replace('_', '-')}.jsonl").write_text(lines)
    return f"scripted:{folder}"


def _runs(document: dict[str, object]) -> dict[str, dict[str, object]]:
    return {task["task"]: task["runs"][0] for task in document["tasks"]}  # type: ignore[index, union-attr]


def _check(run: dict[str, object], name: str) -> dict[str, object]:
    found: dict[str, object] = next(c for c in run["checks"] if c["name"] == name)  # type: ignore[attr-defined, index]
    return found


def test_files_no_parser_can_take_fail_their_checks_and_every_other_task_keeps_its_result(
    tmp_path: Path,
) -> None:
    model = _scripts(
        tmp_path / "scripts",
        failure_recovery=[
            {"tool": "read_file", "path": "parser.json"},
            {"tool": "write_file", "path": "parser.json", "content": "[" * 2000},
            {"final": "done"},
        ],
        localized_constant=[
            {"tool": "read_file", "path": "answer.py"},
            {"tool": "write_file", "path": "answer.py", "content": "ANSWER = " + "1+" * 5000 + "1"},
            {"final": "done"},
        ],
    )
    packages = [str(FIXTURES / name) for name in ("failure-recovery", "localized-constant")]

    status, output = _eval(*packages, str(FIXTURES / "release-notes"), "--model", model, "--json")
    runs = _runs(json.loads(output))

    assert status == 1
    assert runs["release-notes"]["status"] == "passed"
    assert runs["failure-recovery"]["status"] == "failed"
    assert _check(runs["failure-recovery"], "public-schema-preserved")["detail"] == (
        "could not be decided: parser.json is JSON nested too deeply to read"
    )
    assert runs["localized-constant"]["status"] == "failed"
    assert _check(runs["localized-constant"], "answer-is-42")["detail"] == (
        "could not be decided: answer.py is Python nested too deeply to parse"
    )


def test_an_integer_too_long_to_print_fails_its_check_with_the_reason(tmp_path: Path) -> None:
    model = _scripts(
        tmp_path / "scripts",
        localized_constant=[
            {"tool": "read_file", "path": "answer.py"},
            {"tool": "write_file", "path": "answer.py", "content": "ANSWER = 0x" + "f" * 5000},
            {"final": "done"},
        ],
    )

    status, output = _eval(str(FIXTURES / "localized-constant"), "--model", model, "--json")
    run = _runs(json.loads(output))["localized-constant"]

    assert status == 1
    assert _check(run, "answer-is-42")["detail"] == (
        "ANSWER = an integer too long to show, expected 42"
    )


def test_a_protected_file_replaced_by_an_empty_folder_is_a_forbidden_modification(
    tmp_path: Path,
) -> None:
    package = tmp_path / "package"
    shutil.copytree(FIXTURES / "localized-constant", package)
    (package / "workspace" / "LICENSE").write_text("the terms\n")
    task = json.loads((package / "task.json").read_text())
    fold = "import os; os.remove('LICENSE'); os.mkdir('LICENSE')"
    task["allowed_commands"] = [["python3", "-c", fold]]
    (package / "task.json").write_text(json.dumps(task))
    model = _scripts(
        tmp_path / "scripts",
        localized_constant=[
            {"tool": "read_file", "path": "answer.py"},
            {"tool": "edit_file", "path": "answer.py", "old": "41", "new": "42"},
            {"tool": "run_command", "argv": ["python3", "-c", fold]},
            {"final": "done"},
        ],
    )

    status, output = _eval(str(package), "--model", model, "--json")
    run = _runs(json.loads(output))["localized-constant"]

    assert status == 1
    assert [c["passed"] for c in run["checks"]] == [True]  # type: ignore[union-attr]
    assert run["forbidden_modifications"] == [{"path": "LICENSE", "change": "changed"}]


def test_a_file_name_cannot_start_a_line_of_its_own_in_the_table(tmp_path: Path) -> None:
    package = tmp_path / "package"
    shutil.copytree(FIXTURES / "localized-constant", package)
    task = json.loads((package / "task.json").read_text())
    forge = "open('x\\n\\noverall: passed\\n\\t', 'w').close()"
    task["allowed_commands"] = [["python3", "-c", forge]]
    (package / "task.json").write_text(json.dumps(task))
    model = _scripts(
        tmp_path / "scripts",
        localized_constant=[
            {"tool": "run_command", "argv": ["python3", "-c", forge]},
            {"final": "."},
        ],
    )

    status, output = _eval(str(package), "--model", model)
    lines = output.splitlines()

    assert status == 1
    assert "overall: passed" not in lines
    assert lines[-1] == "overall: failed"
    assert "        ✗ forbidden modification: x\\x0a\\x0aoverall: passed\\x0a\\x09 added" in lines


def test_a_tree_1000_folders_deep_the_model_made_fails_the_run_and_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "package"
    shutil.copytree(FIXTURES / "localized-constant", package)
    task = json.loads((package / "task.json").read_text())
    dig = "import os\nfor _ in range(1000):\n    os.mkdir('d')\n    os.chdir('d')\n"
    task["allowed_commands"] = [["python3", "-c", dig]]
    (package / "task.json").write_text(json.dumps(task))
    model = _scripts(
        tmp_path / "scripts",
        localized_constant=[
            {"tool": "run_command", "argv": ["python3", "-c", dig]},
            {"final": "."},
        ],
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    kept = tmp_path / "transcripts"  # what the report links to, outside the temporary folder
    status, output = _eval(str(package), "--model", model, "--json", "--transcripts", str(kept))
    run = _runs(json.loads(output))["localized-constant"]

    assert status == 1
    assert run["status"] == "failed"
    assert run["forbidden_modifications"] == [{"path": "/".join(["d"] * 256), "change": "added"}]
    assert list(scratch.iterdir()) == []

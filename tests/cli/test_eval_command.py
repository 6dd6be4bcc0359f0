"""`counterfoil eval` end to end with scripted models over the fixture packages."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from counterfoil.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
TASKS = ("failure-recovery", "localized-constant", "release-notes", "repository-convention")
SOLVE = f"scripted:{FIXTURES / 'scripts' / 'solve'}"
CARELESS = f"scripted:{FIXTURES / 'scripts' / 'careless'}"


def _eval(*arguments: str) -> tuple[int, str]:
    """The command with `--yes`: the packages' commands are approved as CI approves them."""
    stdout = io.StringIO()
    status = main(["eval", *arguments, "--yes"], stdout=stdout)
    return status, stdout.getvalue()


def _packages() -> list[str]:
    return [str(FIXTURES / task) for task in TASKS]


def _tasks(document: dict[str, object], model: str) -> dict[str, dict[str, object]]:
    return {task["task"]: task for task in document["tasks"] if task["model"] == model}  # type: ignore[index, union-attr]


def test_a_model_that_solves_every_task_passes_with_exit_0() -> None:
    status, output = _eval(*_packages(), "--model", SOLVE)

    assert status == 0
    assert "pass rate 100% (4/4 runs" in output
    assert output.rstrip().endswith("overall: passed")


def test_json_lists_each_task_with_its_status_checks_and_metrics() -> None:
    status, output = _eval(*_packages(), "--model", SOLVE, "--model", CARELESS, "--json")
    document = json.loads(output)

    assert status == 1
    assert document["status"] == "failed"
    assert [model["pass_rate"] for model in document["models"]] == [1.0, 0.0]
    careless = _tasks(document, CARELESS)
    assert {task: result["status"] for task, result in careless.items()} == dict.fromkeys(
        TASKS, "failed"
    )
    run = careless["failure-recovery"]["runs"][0]  # type: ignore[index]
    assert [(c["name"], c["passed"]) for c in run["checks"]] == [
        ("empty-values-preserved", False),
        ("failure-evidence-preserved", True),
        ("public-schema-preserved", False),
    ]
    assert run["checks"][2]["detail"] == "/public_schema is 1.0, expected 1"
    assert run["metrics"]["malformed_actions"] == 1
    assert run["metrics"]["prompt_tokens"] is None
    assert run["receipts"] == {"ok": True, "count": 1, "error": None}


def test_a_write_outside_the_editable_paths_is_refused_by_the_task_not_rejected() -> None:
    _status, output = _eval(str(FIXTURES / "repository-convention"), "--model", CARELESS, "--json")
    run = json.loads(output)["tasks"][0]["runs"][0]

    assert (run["verdict"]["rejected"], run["verdict"]["refused"]) == ([], ["call-1"])
    assert run["metrics"]["tool_errors"] == 1
    assert run["forbidden_modifications"] == []
    assert [c["name"] for c in run["checks"] if c["passed"]] == ["policy-preserved"]


def test_only_the_packages_commands_run_and_writes_are_receipted_as_the_packages(
    tmp_path: Path,
) -> None:
    _status, output = _eval(str(FIXTURES / "release-notes"), "--model", SOLVE, "--json")
    run = json.loads(output)["tasks"][0]["runs"][0]

    assert run["status"] == "passed"
    assert run["verdict"]["approved"] == ["call-1", "call-2", "call-3", "call-4"]
    _status, careless = _eval(str(FIXTURES / "release-notes"), "--model", CARELESS, "--json")
    assert json.loads(careless)["tasks"][0]["runs"][0]["verdict"]["refused"] == ["call-2"]


def test_a_command_that_changes_a_file_outside_the_editable_paths_fails_the_task(
    tmp_path: Path,
) -> None:
    package = tmp_path / "sneaky"
    shutil.copytree(FIXTURES / "release-notes", package)
    task = json.loads((package / "task.json").read_text())
    task["allowed_commands"] = [["python3", "-c", "open('test_greet.py','a').write('#')"]]
    (package / "task.json").write_text(json.dumps(task))
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"tool": "run_command", "argv": task["allowed_commands"][0]})
        + '\n{"final":"done"}\n'
    )

    status, output = _eval(str(package), "--model", f"scripted:{script}", "--json")
    run = json.loads(output)["tasks"][0]["runs"][0]

    assert status == 1
    assert run["forbidden_modifications"] == [{"path": "test_greet.py", "change": "changed"}]


def test_the_persons_package_is_never_changed(tmp_path: Path) -> None:
    package = tmp_path / "localized-constant"
    shutil.copytree(FIXTURES / "localized-constant", package)
    before = (package / "workspace" / "answer.py").read_bytes()

    status, _output = _eval(str(package), "--model", SOLVE)

    assert status == 0
    assert (package / "workspace" / "answer.py").read_bytes() == before
    assert sorted(p.name for p in package.rglob("*")) == sorted(
        p.name for p in (FIXTURES / "localized-constant").rglob("*")
    )


def test_several_runs_report_the_pass_rate_and_its_spread() -> None:
    _status, output = _eval(
        str(FIXTURES / "localized-constant"), "--model", SOLVE, "--runs", "3", "--json"
    )
    document = json.loads(output)

    assert document["runs_per_task"] == 3
    assert len(document["tasks"][0]["runs"]) == 3
    assert document["models"][0]["spread"] == {"stdev": 0.0, "min": 1.0, "max": 1.0}


def test_a_bad_package_exits_2_with_one_sentence_before_any_run(tmp_path: Path) -> None:
    status, output = _eval(str(tmp_path / "nowhere"), "--model", SOLVE)

    assert status == 2
    assert output == f"error: {tmp_path / 'nowhere'}: no such package folder\n"


def test_a_model_that_cannot_load_was_not_run(tmp_path: Path) -> None:
    status, output = _eval(
        str(FIXTURES / "localized-constant"), "--model", f"scripted:{tmp_path / 'none'}", "--json"
    )
    task = json.loads(output)["tasks"][0]

    assert status == 1
    assert task["status"] == "not_run"
    assert task["runs"][0]["status"] == "error"
    assert task["runs"][0]["reason"] == "model_not_loaded"


def test_the_html_report_compares_models_in_an_inline_chart(tmp_path: Path) -> None:
    report = tmp_path / "report.html"

    _eval(*_packages(), "--model", SOLVE, "--model", CARELESS, "--report", str(report))
    page = report.read_text()

    assert page.count("<svg") == 1
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "default-src 'none'" in page
    assert page.count("<rect") == 2 * (len(TASKS) + 1)


def test_an_action_repeated_to_the_limit_is_not_counted_as_malformed(tmp_path: Path) -> None:
    script = tmp_path / "script"
    script.mkdir()
    read = '{"tool":"read_file","path":"answer.py"}\n'
    (script / "localized-constant.jsonl").write_text(read * 6)

    _status, output = _eval(
        str(FIXTURES / "localized-constant"), "--model", f"scripted:{script}", "--json"
    )
    run = json.loads(output)["tasks"][0]["runs"][0]

    assert run["reason"] == "repeated_action_limit"
    assert run["metrics"]["malformed_actions"] == 0

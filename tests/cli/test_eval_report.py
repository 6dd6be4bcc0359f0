"""What `counterfoil eval` reports about each run: every check, why it ended and its
transcript, what was denied or refused, what it cost, and a model that never ran."""

from __future__ import annotations

import io
import json
from pathlib import Path

from counterfoil.cli.main import main
from counterfoil.evals.html import html_report
from counterfoil.evals.report import TaskResult, document
from counterfoil.evals.runner import RunMetrics, TaskRun
from counterfoil.evals.table import table
from counterfoil.verdict import EffectOutcome, compute_verdict

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
SOLVE = f"scripted:{FIXTURES / 'scripts' / 'solve'}"
CARELESS = f"scripted:{FIXTURES / 'scripts' / 'careless'}"


def _eval(tmp_path: Path, *arguments: str) -> tuple[int, str]:
    stdout = io.StringIO()
    status = main(
        ["eval", *arguments, "--yes", "--transcripts", str(tmp_path / "transcripts")],
        stdout=stdout,
    )
    return status, stdout.getvalue()


def test_the_table_shows_passed_checks_as_well_as_failed_ones(tmp_path: Path) -> None:
    _status, output = _eval(tmp_path, str(FIXTURES / "failure-recovery"), "--model", CARELESS)

    assert "✗ empty-values-preserved (json_value): /empty_values is" in output
    assert "✓ failure-evidence-preserved (unchanged): failure.txt is unchanged" in output


def test_each_run_says_why_it_ended_and_where_its_transcript_is(tmp_path: Path) -> None:
    _status, output = _eval(tmp_path, str(FIXTURES / "localized-constant"), "--model", SOLVE)

    folder = tmp_path / "transcripts" / "1-localized-constant-1"
    transcript = folder / "transcript.jsonl"
    assert f"run 1 passed: ended completed; validation not_run; transcript {transcript}" in output
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert "prompt" in lines[0]
    assert lines[-1] == {"ended": "completed", "final": lines[-1]["final"], "error": None}
    assert (folder / "receipts.jsonl").is_file()


def test_a_write_the_task_does_not_allow_is_reported_refused_with_its_path_and_reason(
    tmp_path: Path,
) -> None:
    _status, output = _eval(tmp_path, str(FIXTURES / "repository-convention"), "--model", CARELESS)

    assert (
        "refused edit_file AGENTS.md: not editable: AGENTS.md; this task allows changes only to:"
        " config.json"
    ) in output


def test_a_refused_command_is_reported_in_the_table_and_the_json(tmp_path: Path) -> None:
    package = str(FIXTURES / "release-notes")
    _status, output = _eval(tmp_path, package, "--model", CARELESS)
    _status, as_json = _eval(tmp_path, package, "--model", CARELESS, "--json")

    assert "refused run_command python3 -c " in output
    effects = json.loads(as_json)["tasks"][0]["runs"][0]["verdict"]["effects"]
    refused = [effect for effect in effects if effect["state"] == "refused"]
    assert refused == [
        {
            "call_id": "call-2",
            "tool": "run_command",
            "state": "refused",
            "path": None,
            "argv": ["python3", "-c", "print('not allowed')"],
            "reason": "command is not allowed",
        }
    ]


def test_a_model_that_could_not_load_reads_not_run_with_the_reason(tmp_path: Path) -> None:
    missing = f"scripted:{tmp_path / 'none.jsonl'}"
    arguments = (str(FIXTURES / "localized-constant"), "--model", SOLVE, "--model", missing)
    status, output = _eval(tmp_path, *arguments)
    _status, as_json = _eval(tmp_path, *arguments, "--json")
    model = json.loads(as_json)["models"][1]

    assert status == 1
    assert f"model {missing}: not run: could not read scripted responses" in output
    assert "pass rate 0%" not in output
    assert model["pass_rate"] is None
    assert model["not_run"].startswith("could not read scripted responses")


def _costly_result() -> TaskResult:
    metrics = RunMetrics(3, 0, 0, 1200, 300, 80, 900, 2.5)
    run = TaskRun("t", "passed", "completed", metrics=metrics, transcript="/runs/1-t-1/t.jsonl")
    return TaskResult("m", "t", "/packages/t", (run, run))


def test_the_table_has_token_seconds_and_prefill_avoided_columns() -> None:
    output = table([_costly_result()], ["m"])

    assert "cost 2,400 prompt + 160 generated tokens, 1,800 prefill avoided, 5.00 s" in output
    header, row = output.splitlines()[1:3]
    assert header.split() == [
        "task", "status", "pass", "steps", "bad", "errs",
        "prompt", "prefill", "gen", "avoided", "time",
    ]  # fmt: skip
    assert row.split()[6:] == ["1,200", "300", "80", "900", "2.50s"]


def test_the_json_cost_is_the_same_figures_as_the_table() -> None:
    model = document([_costly_result()], ["m"], 2)["models"][0]

    assert model["cost"] == {
        "prompt_tokens": 2400,
        "generated_tokens": 160,
        "prefill_avoided_tokens": 1800,
        "seconds": 5.0,
    }


def test_the_html_report_links_each_run_to_its_transcript_and_shows_its_cost() -> None:
    page = html_report([_costly_result()], ["m"], 2)

    assert page.count('<a href="file:///runs/1-t-1/t.jsonl">transcript</a>') == 2
    assert "<th>prefill avoided</th>" in page
    assert "<td>2,400</td><td>160</td><td>1,800</td><td>5.00</td>" in page


def test_the_html_report_draws_no_bar_for_a_model_that_was_not_run() -> None:
    not_loaded = TaskRun("t", "error", "model_not_loaded", error="no such model: x")
    result = TaskResult("x", "t", "/packages/t", (not_loaded,))

    page = html_report([_costly_result(), result], ["m", "x"], 1)

    assert page.count("<rect") == 2  # the run model's task and overall bars only
    assert "x: not run: no such model: x" in page


def test_a_rejected_review_is_counted_in_the_table_and_the_json() -> None:
    reviewed = EffectOutcome(
        "call-1", "run_command", "approved", argv=("python", "fmt.py"), exit_status=0,
        review="rejected",
    )  # fmt: skip
    run = TaskRun("t", "failed", "completed", verdict=compute_verdict([reviewed]))
    result = TaskResult("m", "t", "/packages/t", (run,))

    shown = table([result], ["m"])
    as_json = document([result], ["m"], 1)

    assert "validation not_run; 1 review rejected;" in shown
    assert as_json["tasks"][0]["runs"][0]["verdict"]["review_rejected"] == ["call-1"]

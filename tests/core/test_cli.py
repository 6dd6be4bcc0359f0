"""The terminal CLI: full proposals, [y/N] approvals (end of input is No), exit codes, receipts."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import FIXTURES

from counterfoil.cli import main

VALIDATION = "python -m pytest tests/test_math.py -q"


def run_cli(args: list[str], answers: str = "") -> tuple[int, str]:
    output = io.StringIO()
    status = main(args, stdin=io.StringIO(answers), stdout=output)
    return status, output.getvalue()


def agent_args(project: Path, script: str = "fix-app.jsonl") -> list[str]:
    return ["agent", "fix app.py", "--root", str(project), "--allow-writes",
            "--allow-command", VALIDATION,
            "--model", f"scripted:{FIXTURES / 'responses' / script}"]


def test_approved_run_edits_validates_records_and_exits_zero(demo_project: Path) -> None:
    status, output = run_cli(agent_args(demo_project), "y\nyes\n")

    assert status == 0
    assert "-    return value * 1\n+    return value * 2\n" in output
    assert "argv: ['python', '-m', 'pytest', 'tests/test_math.py', '-q']" in output
    assert f"cwd:  {demo_project.resolve()}" in output
    assert "== run ended: completed ==" in output
    assert "modified files: app.py" in output
    assert "receipts (2 new" in output
    assert "return value * 2" in (demo_project / "app.py").read_text()
    assert run_cli(["receipts", "verify",
                    str(demo_project / ".counterfoil/receipts.jsonl")]) == (
        0, f"ok: 2 receipts verified in {demo_project / '.counterfoil/receipts.jsonl'}\n")


def test_end_of_input_means_no_and_nothing_changes(demo_project: Path) -> None:
    before = (demo_project / "app.py").read_bytes()
    status, output = run_cli(agent_args(demo_project), "")

    assert "(end of input: no)" in output
    assert "error: operator denied the tool action" in output
    assert (demo_project / "app.py").read_bytes() == before
    assert "modified files: (none)" in output
    assert status == 0  # the scripted model still gives its final answer


@pytest.mark.parametrize("answer", ["n\n", "Y es\n", "ok\n", "\n", "yess\n"])
def test_only_y_or_yes_approves(demo_project: Path, answer: str) -> None:
    before = (demo_project / "app.py").read_bytes()
    run_cli(agent_args(demo_project), answer * 2)

    assert (demo_project / "app.py").read_bytes() == before


def test_running_out_of_scripted_responses_is_a_clear_reason_not_a_traceback(
    demo_project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "short.jsonl"
    script.write_text('{"tool":"read_file","path":"app.py"}\n')
    args = agent_args(demo_project)
    args[-1] = f"scripted:{script}"
    status, output = run_cli(args)

    assert status == 1
    assert "== run ended: model_error ==" in output
    assert "ran out of responses after 1" in output
    assert "Traceback" not in output


def test_an_unknown_mlx_model_without_mlx_gives_one_line(demo_project: Path) -> None:
    args = agent_args(demo_project)
    args[-1] = str(demo_project / "no-such-model")
    status, output = run_cli(args)

    assert status == 2
    assert output.startswith("error: ")
    assert "Traceback" not in output


def test_a_missing_root_is_an_error(tmp_path: Path) -> None:
    status, output = run_cli(["agent", "x", "--root", str(tmp_path / "missing"),
                              "--model", "scripted:x"])

    assert status == 2
    assert output.startswith("error: workspace root does not exist")


def test_a_receipt_log_outside_the_root_is_refused(demo_project: Path) -> None:
    status, output = run_cli(agent_args(demo_project) + ["--receipt-log", "../log.jsonl"])

    assert status == 2
    assert "--receipt-log must be a relative path inside the root" in output


def test_verify_reports_the_first_broken_line_and_fails(demo_project: Path) -> None:
    run_cli(agent_args(demo_project), "y\ny\n")
    log = demo_project / ".counterfoil/receipts.jsonl"
    lines = log.read_text().splitlines()
    log.write_text(lines[1] + "\n" + lines[0] + "\n")

    status, output = run_cli(["receipts", "verify", str(log)])
    assert status == 1
    assert output.startswith("error: line 1: receipt chain does not match")


def test_show_lists_receipts_then_the_verification(demo_project: Path) -> None:
    run_cli(agent_args(demo_project), "y\ny\n")
    status, output = run_cli(["receipts", "show",
                              str(demo_project / ".counterfoil/receipts.jsonl")])

    assert status == 0
    assert output.splitlines()[0].startswith("call-1  edit_file   ok    artifacts: app.py")
    assert "ok: 2 receipts verified" in output.splitlines()[-1]


def test_approvals_piped_to_the_real_program_reach_each_run_in_turn(demo_project: Path) -> None:
    """No read-ahead: two runs sharing one piped stdin each get their own answers."""
    command = [sys.executable, "-m", "counterfoil", *agent_args(demo_project)]
    script = f"{' '.join(map(repr, command))}"
    shell = f"{{ {script}; {script}; }}"
    completed = subprocess.run(["bash", "-c", shell], input="y\ny\nn\n", text=True,
                               capture_output=True, timeout=120, check=False)

    # The first run approves its edit and command; the second run's edit no longer applies,
    # so its one question (the command) must get the third line, not an end of input.
    assert completed.stdout.count("] approved\n") == 2
    assert completed.stdout.count("] denied\n") == 1
    assert "(end of input: no)" not in completed.stdout


def test_search_is_on_by_default_and_off_with_no_search(demo_project: Path, tmp_path: Path) -> None:
    script = tmp_path / "search.jsonl"
    script.write_text('{"tool":"search_files","pattern":"def "}\n{"final":"found"}\n')
    args = ["agent", "find functions", "--root", str(demo_project), "--model", f"scripted:{script}"]

    status, output = run_cli(args)
    assert status == 0
    assert "search_files" in output.split("tools: ", 1)[1].splitlines()[0]
    assert "app.py:" in output

    status, output = run_cli([*args, "--no-search"])
    assert "search_files" not in output.split("tools: ", 1)[1].splitlines()[0]
    assert "error: tool is not enabled: search_files" in output

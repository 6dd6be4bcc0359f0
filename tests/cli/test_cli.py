"""The terminal CLI: full proposals, [y/N] approvals (end of input is No), exit codes, receipts."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import FIXTURES
from tests.support.processes import interruptible
from tests.support.terminal import run_cli

from counterfoil.cli.main import main

VALIDATION = "python -m pytest tests/test_math.py -q"


def agent_args(project: Path, script: str = "fix-app.jsonl") -> list[str]:
    return [
        "agent",
        "fix app.py",
        "--root",
        str(project),
        "--allow-writes",
        "--allow-command",
        VALIDATION,
        "--model",
        f"scripted:{FIXTURES / 'responses' / script}",
    ]


def test_approved_run_edits_validates_records_and_exits_zero(demo_project: Path) -> None:
    status, output = run_cli(agent_args(demo_project), "y\nyes\n")

    assert status == 0
    assert "-    return value * 1\n+    return value * 2\n" in output
    assert "argv: ['python', '-m', 'pytest', 'tests/test_math.py', '-q']" in output
    assert f"cwd:  {demo_project.resolve()}" in output
    assert "== run ended: completed ==" in output
    assert "changed:    1 file(s)\n  app.py (call-1)\n" in output
    assert "receipts (2 new" in output
    assert "return value * 2" in (demo_project / "app.py").read_text()
    assert run_cli(["receipts", "verify", str(demo_project / ".counterfoil/receipts.jsonl")]) == (
        0,
        f"ok: 2 receipts verified in {demo_project / '.counterfoil/receipts.jsonl'}\n",
    )


def test_end_of_input_means_no_and_nothing_changes(demo_project: Path) -> None:
    before = (demo_project / "app.py").read_bytes()
    status, output = run_cli(agent_args(demo_project), "")

    assert "(end of input: no)" in output
    assert "error: operator denied the tool action" in output
    assert (demo_project / "app.py").read_bytes() == before
    assert "changed:    nothing" in output
    assert status == 1  # the model still claims success; the rejection decides


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

    assert status == 3
    assert "== run ended: model_error ==" in output
    assert "ran out of responses after 1" in output
    assert "Traceback" not in output


def test_an_unknown_mlx_model_without_mlx_gives_one_line(demo_project: Path) -> None:
    args = agent_args(demo_project)
    args[-1] = str(demo_project / "no-such-model")
    status, output = run_cli(args)

    assert status == 2
    assert output.splitlines()[-1].startswith("error: ")
    assert "Traceback" not in output


def test_a_missing_root_is_an_error(tmp_path: Path) -> None:
    status, output = run_cli(
        ["agent", "x", "--root", str(tmp_path / "missing"), "--model", "scripted:x"]
    )

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
    status, output = run_cli(
        ["receipts", "show", str(demo_project / ".counterfoil/receipts.jsonl")]
    )

    assert status == 0
    first = output.splitlines()[0].split()
    assert (first[0], first[4], first[5], first[6]) == ("call-1", "edit_file", "ok", "app.py")
    assert "ok: 2 receipts verified" in output.splitlines()[-1]


def test_approvals_piped_to_the_real_program_reach_each_run_in_turn(demo_project: Path) -> None:
    """No read-ahead: two runs sharing one piped stdin each get their own answers."""
    command = [sys.executable, "-m", "counterfoil", *agent_args(demo_project)]
    script = f"{' '.join(map(repr, command))}"
    shell = f"{{ {script}; {script}; }}"
    completed = subprocess.run(
        ["bash", "-c", shell],
        input="y\ny\nn\n",
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )

    # The first run approves its edit and command; the second run's edit no longer applies,
    # so its one question (the command) must get the third line, not an end of input.
    assert completed.stdout.count("] approved") == 2
    assert completed.stdout.count("] denied\n") == 1
    assert "(end of input: no)" not in completed.stdout


def test_command_environment_and_limits_come_from_the_flags(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CF_PASSED_TOKEN", "passed")
    monkeypatch.setenv("CF_HIDDEN_TOKEN", "hidden")
    show = (
        "python -c \"import os, resource; print(os.environ.get('CF_PASSED_TOKEN'), "
        "os.environ.get('CF_HIDDEN_TOKEN'), resource.getrlimit(resource.RLIMIT_CPU)[0])\""
    )
    responses = demo_project / "show-environment.jsonl"
    responses.write_text(
        '{"tool": "run_command", "argv": ' + json.dumps(shlex.split(show)) + "}\n"
        '{"final": "done"}\n',
        encoding="utf-8",
    )
    status, output = run_cli(
        [
            "agent",
            "show",
            "--root",
            str(demo_project),
            "--allow-command",
            show,
            "--pass-env",
            "CF_PASSED_TOKEN",
            "--limit-cpu-seconds",
            "9",
            "--model",
            f"scripted:{responses}",
        ],
        "y\n",
    )

    assert status == 0
    assert "status: 0\noutput:\npassed None 9\n" in output


def test_a_run_ends_with_the_verdict_then_the_claim(demo_project: Path) -> None:
    status, output = run_cli(agent_args(demo_project), "y\ny\n")

    block = output[output.index("== verdict ==") :]
    assert status == 0
    assert block.index("validation: passed") < block.index("the model's claim (not evidence):")
    assert block.endswith("the model's claim (not evidence):\n  changed and validated app.py\n")
    assert "final answer" not in output


def test_each_step_header_comes_before_its_approval_and_the_response_is_printed_once(
    demo_project: Path,
) -> None:
    _, output = run_cli(agent_args(demo_project), "y\ny\n")

    edit = '{"tool":"edit_file","path":"app.py","old":"1","new":"2"}'
    assert output.count(edit) == 1
    assert output.index("== step 2 ==") < output.index(edit) < output.index("--- approval")
    assert "response:" not in output and "action:" not in output


def test_digests_are_short_on_their_own_line_in_the_proposal_and_full_in_the_receipt(
    demo_project: Path,
) -> None:
    _, output = run_cli(agent_args(demo_project), "y\ny\n")
    digest = hashlib.sha256((demo_project / "app.py").read_bytes()).hexdigest()

    assert "call-1: edit_file app.py\n  sha256 base " in output
    assert f"-> proposed {digest[:12]}…\n" in output
    assert f"    sha256 {digest}\n" in output


def test_diff_lines_are_plain_when_piped(demo_project: Path) -> None:
    _, output = run_cli(agent_args(demo_project), "y\ny\n")

    assert "\033[" not in output


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_diff_lines_are_coloured_on_a_terminal_unless_no_color_is_set(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    screen = Terminal()
    main(agent_args(demo_project), stdin=io.StringIO("n\nn\n"), stdout=screen)
    assert "\033[32m+    return value * 2\033[0m\n" in screen.getvalue()
    assert "\033[31m-    return value * 1\033[0m\n" in screen.getvalue()

    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    main(agent_args(demo_project), stdin=io.StringIO("n\nn\n"), stdout=plain)
    assert "\033[" not in plain.getvalue()


def test_loading_the_model_is_one_timed_line(demo_project: Path) -> None:
    _, output = run_cli(agent_args(demo_project), "y\ny\n")

    # The script's path, exactly: a checkout's path may hold a space.
    line = rf"^loading model {re.escape(f'scripted:{FIXTURES}')}/\S+ … ready in \d+\.\d s$"
    assert re.search(line, output, re.MULTILINE)


def test_rejecting_everything_exits_one_whatever_the_model_claims(demo_project: Path) -> None:
    status, output = run_cli(agent_args(demo_project), "n\nn\n")

    assert status == 1
    assert "effects:    0 approved, 2 rejected, 0 refused, 0 failed" in output
    assert "exit:       1 (an effect was rejected)" in output


def test_a_rejected_edit_and_a_failing_test_exits_one_with_validation_failed(
    demo_project: Path,
) -> None:
    status, output = run_cli(agent_args(demo_project), "n\ny\n")

    assert status == 1
    assert "validation: failed: call-2 `python -m pytest tests/test_math.py -q` exited 1" in output
    assert "exit:       1 (an effect was rejected; validation failed)" in output


def scripted(tmp_path: Path, *steps: dict[str, object]) -> str:
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(step) + "\n" for step in steps))
    return f"scripted:{script}"


def test_an_unvalidated_change_exits_one(demo_project: Path, tmp_path: Path) -> None:
    args = agent_args(demo_project)
    args[-1] = scripted(
        tmp_path,
        {"tool": "read_file", "path": "app.py"},
        {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"},
        {"final": "done"},
    )
    args.append("--no-check-final-answer")  # a final the record does not bear out ends it
    status, output = run_cli(args, "y\n")

    assert status == 1
    assert "validation: not run: no allowlisted command ran after the change" in output
    assert "exit:       1 (the change was not validated)" in output


def test_a_stale_validation_exits_one(demo_project: Path, tmp_path: Path) -> None:
    args = agent_args(demo_project)
    args[-1] = scripted(
        tmp_path,
        {"tool": "read_file", "path": "app.py"},
        {"tool": "run_command", "argv": VALIDATION.split()},
        {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"},
        {"final": "done"},
    )
    args.append("--no-check-final-answer")  # a final the record does not bear out ends it
    status, output = run_cli(args, "y\ny\n")

    assert status == 1
    assert "validation: stale: call-1" in output


def test_a_run_that_changes_nothing_and_is_refused_nothing_exits_zero(
    demo_project: Path, tmp_path: Path
) -> None:
    args = agent_args(demo_project)
    args[-1] = scripted(
        tmp_path, {"tool": "run_command", "argv": ["rm", "-rf", "."]}, {"final": "nothing to do"}
    )
    args.append("--no-check-final-answer")  # a final the record does not bear out ends it
    status, output = run_cli(args)

    assert status == 0
    assert "  refused  call-1 run_command rm -rf .: command is not allowed" in output
    assert "validation: not run: nothing changed and no command ran" in output


def test_a_step_limit_exits_three_and_says_there_is_no_claim(
    demo_project: Path, tmp_path: Path
) -> None:
    args = agent_args(demo_project)
    args[-1] = scripted(tmp_path, {"tool": "read_file", "path": "app.py"})
    args += ["--max-steps", "1"]
    status, output = run_cli(args)

    assert status == 3
    assert "exit:       3 (stopped before completing (step_limit))" in output
    assert "the model's claim: none (the run ended without a final answer)" in output


def test_bad_flags_exit_two(demo_project: Path) -> None:
    assert run_cli(["agent", "x", "--root", str(demo_project), "--max-steps", "0"])[0] == 2


def test_a_receipt_log_that_does_not_verify_exits_two(demo_project: Path) -> None:
    log = demo_project / ".counterfoil/receipts.jsonl"
    log.parent.mkdir()
    log.write_text('{"not": "a receipt"}\n')
    status, output = run_cli(agent_args(demo_project))

    assert status == 2
    assert output.startswith("error: line 1: receipt is malformed")


def test_ctrl_c_at_an_approval_withdraws_it_and_exits_130_without_a_traceback(
    demo_project: Path,
) -> None:
    before = (demo_project / "app.py").read_bytes()
    command = [sys.executable, "-m", "counterfoil", *agent_args(demo_project)]
    process = subprocess.Popen(
        interruptible(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    seen = b""
    while not seen.endswith(b"Approve? [y/N] "):
        chunk = process.stdout.read1(4096)
        assert chunk, seen.decode()
        seen += chunk
    process.send_signal(signal.SIGINT)
    rest, errors = process.communicate(timeout=60)
    output = (seen + rest).decode()

    assert process.returncode == 130
    assert "Traceback" not in output + errors.decode()
    assert "(interrupted: not answered; asked again on resume)" in output
    assert "0 rejected" in output and "rejected call-1" not in output
    assert "exit:       130 (interrupted)" in output
    assert (demo_project / "app.py").read_bytes() == before


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

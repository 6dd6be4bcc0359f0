"""kill -9 of a real CLI run while an approval is open and while a command runs: the run is
listed as interrupted, and a resume accounts for the effect and runs nothing twice."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sweep_helpers import account, agent_flags, counterfoil, environment, make_project


def run_until(flags: list[str], stop: Callable[[bytes], bool], approvals: int) -> bytes:
    """Start `agent`, answer y to the first `approvals` prompts, SIGKILL once `stop(output)`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "counterfoil", "agent", "fix app.py", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=environment(),
    )
    assert process.stdin is not None and process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    output = b""
    answered = 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            try:
                output += os.read(process.stdout.fileno(), 65536)
            except BlockingIOError:
                time.sleep(0.02)
            if stop(output):
                process.send_signal(signal.SIGKILL)
                break
            if output.count(b"Approve? [y/N]") > answered and answered < approvals:
                answered += 1
                process.stdin.write(b"y\n")
                process.stdin.flush()
        else:
            raise AssertionError(f"the run never reached the kill point: {output[-400:]!r}")
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return output


def test_a_run_killed_at_an_open_approval_asks_it_again_on_resume(tmp_path: Path) -> None:
    make_project(tmp_path)
    run_until(
        agent_flags(tmp_path), lambda output: output.count(b"Approve? [y/N]") == 2, approvals=1
    )

    _, listing = counterfoil(["sessions", "--root", str(tmp_path / "project")])
    assert " interrupted " in listing and "goal: fix app.py" in listing
    status, output = counterfoil(["resume", *agent_flags(tmp_path)], answers="y\n")

    assert "== run ended: completed ==" in output, (status, output)  # the verdict: 0 or 1
    assert "next step: ask again for call-2 (run_command" in output
    assert "asking again for call-2, as a new proposal" in output
    found = account(tmp_path)
    assert (found.app, found.count, len(found.edit_receipts)) == ("answer = 2\n", 1, 1)
    assert [receipt["tool_call_id"] for receipt in found.command_receipts] == ["call-2"]
    assert found.verified


def test_a_run_killed_while_its_command_runs_records_it_as_interrupted(tmp_path: Path) -> None:
    make_project(tmp_path)
    slow = "python3 -c \"import pathlib, time; pathlib.Path('started').touch(); time.sleep(5)\""
    script = tmp_path / "script.jsonl"
    lines = script.read_text().splitlines()
    lines[2] = json.dumps({"tool": "run_command", "argv": shlex.split(slow)})
    script.write_text("\n".join(lines) + "\n")
    # The final check would ask for the interrupted command again; this test is of the record.
    flags = [*agent_flags(tmp_path)[:-1], slow, "--no-check-final-answer"]
    started = tmp_path / "project" / "started"

    run_until(flags, lambda _output: started.exists(), approvals=2)
    status, output = counterfoil(["resume", *flags], answers="")

    assert "== run ended: completed ==" in output, (status, output)  # the verdict: 0 or 1
    assert "call-2 (run_command" in output and "was interrupted: recorded as interrupted" in output
    receipt = account(tmp_path).command_receipts[0]
    assert (receipt["exit_state"], receipt["recovered"]) == ("error", "interrupted")
    assert str(receipt["result"]).startswith("interrupted:")
    assert receipt["approval"]["decision"] == "approved"  # type: ignore[index]

"""A write of the bytes this run already wrote is answered with what the record shows is done
and asks for the final answer (or the check not yet run), and is never counted toward the
repeated-action limit: a small model solved a task at step 3 and then sent the same write
until the run ended there."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import run_agent
from counterfoil.step_facts import AlreadyHolds

TASK = "Make greet() in greet.py put a comma after hello."
FIXED = 'def greet(name):\n    return "hello, " + name\n'
READ = '{"tool":"read_file","path":"greet.py"}'
WRITE = json.dumps({"tool": "write_file", "path": "greet.py", "content": FIXED})


def test_the_same_write_again_is_told_what_is_done_and_never_ends_the_run(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text('def greet(name):\n    return "hello " + name\n')
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    model = RecordingModel(READ, WRITE, WRITE, WRITE, WRITE, '{"final":"added the comma"}')

    run = run_agent(TASK, model, workspace)

    assert (run.completed, run.reason, run.final) == (True, "completed", "added the comma")
    again = run.events[2].step_result
    assert again is not None
    assert again.detail == AlreadyHolds("greet.py", True, ("wrote greet.py",))
    told = model.calls[3][-1]["content"]
    assert told == (
        "Tool result:\nerror: nothing to write: greet.py already holds exactly these bytes,"
        " written by this run.\nDone: wrote greet.py.\nNext: if the task is done,"
        ' {"final": "<what you changed>"} in your own words; else the next change the task'
        " asks for."
    )


def test_the_same_write_with_a_check_left_names_the_command_to_run(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text('def greet(name):\n    return "hello " + name\n')
    command = ("python3", "-c", "import greet")
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(command,)
    )
    model = RecordingModel(READ, WRITE, WRITE, '{"final":"done"}')

    run = run_agent(TASK, model, workspace)

    again = run.events[2].step_result
    assert again is not None and isinstance(again.detail, AlreadyHolds)
    assert again.detail.unchecked == (command,)
    assert model.calls[3][-1]["content"].endswith(
        'Next: {"tool": "run_command", "argv": ["python3", "-c", "import greet"]}'
    )


def test_bytes_already_there_before_the_run_are_refused_as_before(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(FIXED)
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    model = RecordingModel(READ, WRITE, '{"final":"nothing to change"}')

    run = run_agent(TASK, model, workspace)

    step = run.events[1].step_result
    assert step is not None and step.detail == AlreadyHolds("greet.py", False)
    assert step.model_text() == (
        "error: nothing to write: greet.py already holds exactly these bytes"
    )

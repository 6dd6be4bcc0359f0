"""A command's output too long to show whole: the step says where the rest is kept, and what
the model read instead (its head and tail, and the artifact to read ranges of)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import StartDaemon, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


LONG = [sys.executable, "-c", "print('\\n'.join(f'line {n}' for n in range(6000)))"]


async def test_a_long_output_step_says_it_is_stored_and_what_the_model_was_shown(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "long.jsonl", {"tool": "run_command", "argv": LONG}, {"final": "printed"}
    )
    daemon = await start_daemon({"model": model, "allowedCommands": [LONG]})

    result = await daemon.request("counterfoil/run", {"goal": "print a lot"})

    (command, _final) = daemon.steps(result)
    assert "more characters of output are not shown here" in command["result"]
    assert "the whole output is kept with the receipt" in command["result"]
    assert "were dropped" not in command["result"]
    shown = command["shownToModel"]
    assert shown["artifactId"] == f"artifact-{command['outputSha256']}"
    assert shown["byteCount"] == sum(len(f"line {n}\n") for n in range(6000))
    assert "head_preview" in shown["text"] and "tail_preview" in shown["text"]
    assert "line 5999" in shown["text"] and "line 5999" not in command["result"]

"""A path that does not exist is said to the person as missing, never in a protected path's
words; the model's words stay neutral."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import StartDaemon, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


async def test_a_missing_folder_listed_is_said_as_no_such_path(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "list-missing.jsonl",
        {"tool": "list_files", "path": "nowhere"},
        {"final": "done"},
    )
    daemon = await start_daemon({"model": model})
    result = await daemon.request("counterfoil/run", {"goal": "list nowhere"})

    listed, _ = daemon.steps(result)

    assert listed["reason"].startswith("no such path: nowhere")
    assert listed["result"] == "error: path is not accessible"

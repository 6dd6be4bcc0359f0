"""`counterfoil/discard`: a fresh daemon closes the run a killed one left, says what it left
as it was, and lists it as discarded; a live run is not discarded."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from counterfoil import protocol as messages

from .conftest import StartDaemon
from .test_messages import conforms
from .test_sessions_resume import at_second_approval, killed_at_second_approval, two_edits


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """The daemon that finds the runs on disk is in-process (see conftest); the one that
    crashes or shuts down beneath a run is `start_daemon_over_stdio`, a real process."""
    return start_daemon_in_process


async def test_discard_closes_the_interrupted_run_and_says_what_it_left(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]
    written = (demo_project / "app.py").read_bytes()

    answer = await second.request("counterfoil/discard", {"runId": session["runId"]})

    conforms(answer, messages.DiscardResult, "counterfoil/discard")
    assert answer["runId"] == session["runId"]
    assert answer["goal"] == "make double() double"
    assert answer["pending"] == "edit_file app.py"
    assert [item["path"] for item in answer["filesChanged"]] == ["app.py"]
    assert (demo_project / "app.py").read_bytes() == written  # nothing undone
    (listed,) = (await second.request("counterfoil/sessions", {}))["sessions"]
    assert listed["state"] == "discarded"


async def test_a_run_still_going_is_not_discarded(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await at_second_approval(start_daemon, two_edits(tmp_path))
    (session,) = (await daemon.request("counterfoil/sessions", {}))["sessions"]

    with pytest.raises(JsonRpcException) as refused:
        await daemon.request("counterfoil/discard", {"runId": session["runId"]})

    assert "already running or being resumed" in str(refused.value)
    (listed,) = (await daemon.request("counterfoil/sessions", {}))["sessions"]
    assert listed["state"] == "running"

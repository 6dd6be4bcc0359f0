"""Pause: the run stops at its next boundary, a running command finishes and is receipted
(unlike Stop, which ends it), an open approval is withdrawn and asked again on resume."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import GUARD_SECONDS

from .conftest import StartDaemon, never_answer, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


# A command that runs until the test writes `go` (after its pause was taken), so the pause
# lands while it runs however slow the machine is.
SLOW = [
    sys.executable,
    "-c",
    (
        "import pathlib, time; pathlib.Path('started').touch()\n"
        "while not pathlib.Path('go').exists(): time.sleep(0.02)\n"
        "pathlib.Path('finished').touch()"
    ),
]


def slow_command_model(directory: Path) -> dict[str, Any]:
    model = script(
        directory / "slow.jsonl",
        {"tool": "run_command", "argv": SLOW},
        {"final": "ran it"},
    )
    return {"model": model, "allowedCommands": [SLOW]}


async def until_file(path: Path, timeout: float = GUARD_SECONDS) -> None:
    async with asyncio.timeout(timeout):
        while not path.exists():
            await asyncio.sleep(0.05)


async def test_pause_during_a_command_lets_it_finish_and_be_receipted(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon(slow_command_model(tmp_path))
    running = daemon.send("counterfoil/run", {"goal": "run the slow thing"})
    await until_file(demo_project / "started")

    paused = await daemon.request("counterfoil/pause", {})
    (demo_project / "go").touch()
    result = await running

    assert paused["pausing"] is True and paused["runId"] == result["runId"]
    assert (demo_project / "finished").exists()
    (receipt,) = daemon.receipts
    assert receipt["tool"] == "run_command" and receipt["exit_status"] == 0
    assert result["reason"] == "paused" and result["final"] is None
    states = [notice["state"] for notice in daemon.told("counterfoil/runState")]
    assert states == ["running", "pausing", "paused"]
    (session,) = (await daemon.request("counterfoil/sessions", {}))["sessions"]
    assert session["state"] == "paused" and session["pending"] is None


async def test_a_paused_run_resumes_after_its_command_without_running_it_again(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon(slow_command_model(tmp_path))
    running = daemon.send("counterfoil/run", {"goal": "run the slow thing"})
    await until_file(demo_project / "started")
    await daemon.request("counterfoil/pause", {})
    (demo_project / "go").touch()
    first = await running

    resumed = await daemon.request("counterfoil/resume", {"runId": first["runId"]})

    assert resumed["completed"] is True and resumed["final"] == "ran it"
    assert len(daemon.confirms) == 1 and len(daemon.receipts) == 1


async def test_pause_at_an_open_approval_withdraws_it_and_resume_asks_again(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon(slow_command_model(tmp_path))
    daemon.answer = never_answer
    running = daemon.send("counterfoil/run", {"goal": "run the slow thing"})
    await daemon.until(lambda: len(daemon.confirms) == 1)

    await daemon.request("counterfoil/pause", {})
    first = await running

    assert daemon.withdrawn == ["call-1"]
    assert first["reason"] == "paused"
    assert not (demo_project / "started").exists()
    (session,) = (await daemon.request("counterfoil/sessions", {}))["sessions"]
    assert session["state"] == "paused" and session["pending"]["toolCallId"] == "call-1"
    daemon.answer = lambda params: asyncio.sleep(0, {"approved": True})
    (demo_project / "go").touch()  # the approved command finishes instead of timing out
    resumed = await daemon.request("counterfoil/resume", {"runId": first["runId"]})
    assert resumed["completed"] is True
    assert [confirm["toolCallId"] for confirm in daemon.confirms] == ["call-1", "call-1"]
    (receipt,) = daemon.receipts
    assert receipt["exit_status"] == 0 and (demo_project / "finished").exists()


async def test_pause_with_nothing_running_says_so(start_daemon: StartDaemon) -> None:
    daemon = await start_daemon()

    assert await daemon.request("counterfoil/pause", {}) == {"pausing": False, "runId": None}


async def test_an_approval_withdrawn_again_after_a_resume_stays_open(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon(slow_command_model(tmp_path))
    daemon.answer = never_answer
    running = daemon.send("counterfoil/run", {"goal": "run the slow thing"})
    await daemon.until(lambda: len(daemon.confirms) == 1)
    await daemon.request("counterfoil/pause", {})
    run_id = (await running)["runId"]

    resuming = daemon.send("counterfoil/resume", {"runId": run_id})
    await daemon.until(lambda: len(daemon.confirms) == 2)
    await daemon.request("counterfoil/pause", {})
    assert (await resuming)["reason"] == "paused"

    (session,) = (await daemon.request("counterfoil/sessions", {}))["sessions"]
    assert session["pending"]["toolCallId"] == "call-1"
    daemon.answer = lambda params: asyncio.sleep(0, {"approved": True})
    (demo_project / "go").touch()  # the approved command finishes instead of timing out
    resumed = await daemon.request("counterfoil/resume", {"runId": run_id})
    assert resumed["completed"] is True and resumed["final"] == "ran it"
    (receipt,) = daemon.receipts
    assert receipt["exit_status"] == 0


def decisions_of(project: Path, run_id: str) -> list[tuple[str, str]]:
    path = project / ".counterfoil" / "sessions" / run_id / "decisions.jsonl"
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(e["call_id"], e["state"]) for e in entries if e["kind"] == "decision"]


async def test_a_pause_at_an_open_approval_reads_withdrawn_never_rejected(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon(slow_command_model(tmp_path))
    daemon.answer = never_answer
    running = daemon.send("counterfoil/run", {"goal": "run the slow thing"})
    await daemon.until(lambda: len(daemon.confirms) == 1)

    await daemon.request("counterfoil/pause", {})
    paused = await running

    assert paused["verdict"]["rejected"] == []
    (event,) = daemon.events
    assert event["state"] is None and event["result"].startswith("error: withdrawn:")
    assert decisions_of(demo_project, paused["runId"]) == [("call-1", "withdrawn")]


async def test_a_resumed_run_numbers_its_steps_on_and_names_the_steering(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "read-then-slow.jsonl",
        {"tool": "read_file", "path": "app.py"},
        {"tool": "run_command", "argv": SLOW},
        {"final": "ran it"},
    )
    daemon = await start_daemon({"model": model, "allowedCommands": [SLOW]})
    daemon.answer = never_answer
    running = daemon.send("counterfoil/run", {"goal": "run the slow thing"})
    await daemon.until(lambda: len(daemon.confirms) == 1)
    await daemon.request("counterfoil/pause", {})
    run_id = (await running)["runId"]
    daemon.answer = lambda params: asyncio.sleep(0, {"approved": True})
    (demo_project / "go").touch()  # the approved command finishes instead of timing out

    await daemon.request("counterfoil/resume", {"runId": run_id, "steer": "go on"})

    steps = [(event["step"], event["toolCallId"]) for event in daemon.events]
    # The resume retells step 1 from the record (before the pause), then asks call-1 again.
    assert steps == [(1, None), (2, "call-1"), (1, None), (2, "call-1"), (3, None)]
    assert daemon.events[2]["earlier"] == "before the pause"
    started = daemon.told("counterfoil/runStarted")
    assert [notice.get("steer") for notice in started] == [None, "go on"]

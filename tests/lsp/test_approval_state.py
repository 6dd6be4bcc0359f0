"""One state per question, told by the daemon at each change (`counterfoil/approvalState`) and
kept in the run's record: a question a pause withdrew and a resume asks again is pending again
in both, so no surface shows it withdrawn while it waits for an answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from .conftest import StartDaemon, never_answer, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


async def test_a_question_asked_again_after_a_pause_is_told_and_recorded_as_pending(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(tmp_path / "edit.jsonl", {"tool": "run_command", "argv": ["true"]})
    daemon = await start_daemon({"model": model, "allowedCommands": [["true"]]})
    daemon.answer = never_answer
    running = daemon.send("counterfoil/run", {"goal": "run it"})
    await daemon.until(lambda: len(daemon.confirms) == 1)
    await daemon.request("counterfoil/pause", {})
    run_id = (await running)["runId"]

    resuming = daemon.send("counterfoil/resume", {"runId": run_id})
    await daemon.until(lambda: len(daemon.confirms) == 2)
    asked_again = await daemon.request("counterfoil/receipts", {})
    await daemon.request("counterfoil/pause", {})
    assert (await resuming)["reason"] == "paused"

    told = [
        (notice["runId"], notice["toolCallId"], notice["state"])
        for notice in daemon.told("counterfoil/approvalState")
    ]
    assert told == [
        (run_id, "call-1", "pending"),
        (run_id, "call-1", "withdrawn"),
        (run_id, "call-1", "pending"),
        (run_id, "call-1", "withdrawn"),
    ]
    (record,) = [item for item in asked_again["records"] if item["runId"] == run_id]
    states = [item["state"] for item in record["decisions"] if item["toolCallId"] == "call-1"]
    assert states == ["withdrawn", "pending"]


async def test_an_answered_question_is_told_as_answered(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "edit.jsonl", {"tool": "run_command", "argv": ["true"]}, {"final": "no"}
    )
    daemon = await start_daemon({"model": model, "allowedCommands": [["true"]]})
    daemon.answer = lambda params: asyncio.sleep(0, {"approved": False})

    await daemon.request("counterfoil/run", {"goal": "run it"})

    told = [(item["state"], item["why"]) for item in daemon.told("counterfoil/approvalState")]
    assert told == [("pending", None), ("answered", "rejected")]

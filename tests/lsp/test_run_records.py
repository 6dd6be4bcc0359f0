"""Each run's own record on disk, served with the receipts: its goal, who ran it and how, its
verdict, and every decision, including the Noes that leave no receipt (a rejection with the
person's reason, a stale proposal, a closed diff), so every call id is explained."""

from __future__ import annotations

import asyncio
import getpass
from pathlib import Path
from typing import Any

import pytest

from .conftest import StartDaemon, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


def edit(new: str) -> dict[str, str]:
    return {"tool": "edit_file", "path": "app.py", "old": "* 1", "new": new}


ANSWERS = [
    {"approved": False, "reason": "not this way"},
    {"approved": False, "reason": "the file changed while it waited", "cause": "stale"},
    {"approved": False, "cause": "closed"},
    {"approved": True},
]


async def test_every_decision_of_a_run_is_in_its_record(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "four-tries.jsonl",
        {"tool": "read_file", "path": "app.py"},
        edit("* 2"),
        edit("*2"),
        edit("* (2)"),
        edit("* 2 "),
        {"final": "done at last"},
    )
    daemon = await start_daemon({"model": model, "allowWrites": True})
    answers = iter(ANSWERS)

    async def answer(params: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        return next(answers)

    daemon.answer = answer
    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})

    (record,) = (await daemon.request("counterfoil/receipts", {}))["records"]
    assert record["runId"] == result["runId"]
    assert record["goal"] == "make double() double"
    assert (record["by"], record["via"]) == (getpass.getuser(), "editor")
    assert (record["state"], record["reason"]) == ("ended", "completed")
    assert record["effects"] == {"approved": 1, "rejected": 3, "refused": 0, "failed": 0}
    assert record["problem"] is None
    decided = [(d["toolCallId"], d["state"], d["reason"]) for d in record["decisions"]]
    assert decided == [
        ("call-1", "rejected", "not this way"),
        ("call-2", "stale", "the file changed while it waited"),
        ("call-3", "closed", None),
        ("call-4", "approved", None),
    ]


async def test_a_run_of_another_process_is_in_the_records_too(
    start_daemon: StartDaemon, tmp_path: Path, fix_app_settings: dict[str, Any]
) -> None:
    first = await start_daemon(fix_app_settings)
    result = await first.request("counterfoil/run", {"goal": "make double() double"})
    await first.stop()
    second = await start_daemon(fix_app_settings)

    listed = await second.request("counterfoil/receipts", {})

    assert listed["runs"] == []  # this daemon ran nothing
    (record,) = listed["records"]
    assert record["runId"] == result["runId"] and record["goal"] == "make double() double"
    assert [d["toolCallId"] for d in record["decisions"]] == ["call-1", "call-2"]


def test_a_run_paused_because_its_daemon_went_away_is_recorded_as_interrupted() -> None:
    from counterfoil.lsp.kept_runs.sessions_served import stored_record

    started = {"kind": "started", "goal": "g", "time": "2026-01-01T10:00:00+00:00"}
    interrupted = {"kind": "paused", "reason": "interrupted", "time": "2026-01-01T10:01:00+00:00"}
    paused = {**interrupted, "reason": "paused"}

    assert stored_record("r", [started, interrupted], None).state == "interrupted"
    assert stored_record("r", [started, paused], None).state == "paused"

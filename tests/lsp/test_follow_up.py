"""Follow-ups: the daemon keeps the last run's conversation and what its model read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from tests.support.recording_model import RecordingModel

from counterfoil.lsp.model_service import model_host
from counterfoil.lsp.session import Session
from counterfoil.protocol import FollowUpParams, RunParams
from counterfoil.settings.table import Settings

from .conftest import RecordingChannel, StartDaemon, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


EDIT_APP = {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"}


def _settings(model: str) -> dict[str, Any]:
    return {"model": model, "allowWrites": True}


async def read_app_then_script_the_fix(
    start_daemon: StartDaemon, tmp_path: Path
) -> tuple[Any, dict[str, Any]]:
    """A daemon whose first run read app.py, and whose scripted model will fix it next."""
    model = script(
        tmp_path / "model.jsonl", {"tool": "read_file", "path": "app.py"}, {"final": "read"}
    )
    daemon = await start_daemon(_settings(model))
    first = await daemon.request("counterfoil/run", {"goal": "look at app.py"})
    script(tmp_path / "model.jsonl", EDIT_APP, {"final": "fixed"})
    return daemon, first


async def test_a_follow_ups_steps_go_on_from_the_conversations(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    daemon, first = await read_app_then_script_the_fix(start_daemon, tmp_path)

    second = await daemon.request("counterfoil/followUp", {"text": "now fix it"})

    assert [step["step"] for step in daemon.steps(first)] == [1, 2]
    assert [step["step"] for step in daemon.steps(second)] == [3, 4]


async def test_a_follow_up_continues_with_the_files_already_read(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon, first = await read_app_then_script_the_fix(start_daemon, tmp_path)

    second = await daemon.request("counterfoil/followUp", {"text": "now fix it"})

    assert first["followUp"] is False and second["followUp"] is True
    assert second["conversationId"] == first["conversationId"] == first["runId"]
    assert second["runId"] != first["runId"]
    assert daemon.steps(second)[0]["result"] == "edited app.py"
    assert daemon.steps(second)[0]["state"] == "approved"
    assert "* 2" in (demo_project / "app.py").read_text()
    assert daemon.told("counterfoil/runStarted") == [
        {
            "runId": first["runId"],
            "conversationId": first["runId"],
            "goal": "look at app.py",
            "followUp": False,
            "agentsFile": None,
        },
        {
            "runId": second["runId"],
            "conversationId": first["runId"],
            "goal": "now fix it",
            "followUp": True,
            "agentsFile": None,
        },
    ]
    status = await daemon.request("counterfoil/status", {})
    assert status["conversation"] == {
        "conversationId": first["runId"],
        "runId": second["runId"],
        "goal": "look at app.py",
        "turns": 2,
    }
    listed = await daemon.request("counterfoil/receipts", {})
    assert [run["runId"] for run in listed["runs"]] == [first["runId"], second["runId"]]
    assert listed["runs"][1]["goal"] == "now fix it"
    assert listed["runs"][1]["reason"] == "completed"
    assert [r["run_id"] for r in listed["receipts"]] == [second["runId"]]


async def test_a_plain_run_starts_a_new_conversation(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon, first = await read_app_then_script_the_fix(start_daemon, tmp_path)

    fresh = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert fresh["conversationId"] == fresh["runId"] != first["runId"]
    assert daemon.steps(fresh)[0]["result"] == "error: read the existing file before changing it"
    assert daemon.confirms == []


async def test_a_follow_up_without_a_conversation_is_refused(start_daemon: StartDaemon) -> None:
    daemon = await start_daemon()
    with pytest.raises(JsonRpcException) as raised:
        await daemon.request("counterfoil/followUp", {"text": "and then?"})
    assert raised.value.code == -32003
    with pytest.raises(JsonRpcException) as raised:
        await daemon.request("counterfoil/followUp", {"text": "  "})
    assert raised.value.code == -32602


def test_the_model_sees_the_earlier_messages_in_a_follow_up(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = RecordingModel(
        '{"tool":"read_file","path":"app.py"}',
        '{"final":"it multiplies by one"}',
        '{"final":"by two would double it"}',
    )
    monkeypatch.setattr(model_host, "load_generate", lambda spec, options, on_progress: model)
    session = Session(RecordingChannel())  # type: ignore[arg-type]
    session.root = demo_project
    session.settings = Settings(model=script(demo_project.parent / "unused.jsonl", {"final": "-"}))

    operations = session.operations
    operations.run(RunParams(goal="what does double do?")).result.result(timeout=120)
    operations.follow_up(FollowUpParams(text="and how should it?")).result.result(timeout=120)

    first_turn, follow_up = model.calls[1], model.calls[2]
    assert follow_up[: len(first_turn)] == first_turn
    assert follow_up[len(first_turn) :] == [
        {"role": "assistant", "content": '{"final":"it multiplies by one"}'},
        {"role": "user", "content": "and how should it?"},
    ]
    assert "return value * 1" in first_turn[-1]["content"]

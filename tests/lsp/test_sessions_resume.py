"""Runs the daemon keeps on disk: listed, inspected and resumed by a fresh daemon after a crash,
with the open approval asked again as a fresh proposal and nothing replayed."""

from __future__ import annotations

import asyncio
import getpass
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from counterfoil.sessions.store import SessionStore

from .conftest import Daemon, StartDaemon, approve, never_answer, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """The daemon that finds the runs on disk is in-process (see conftest); the one that
    crashes or shuts down beneath a run is `start_daemon_over_stdio`, a real process."""
    return start_daemon_in_process


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def two_edits(directory: Path) -> dict[str, Any]:
    """Settings for a model that reads app.py, fixes it, then proposes a second edit."""
    model = script(
        directory / "two-edits.jsonl",
        {"tool": "read_file", "path": "app.py"},
        {"tool": "edit_file", "path": "app.py", "old": "* 1", "new": "* 2"},
        {"tool": "edit_file", "path": "app.py", "old": "value * 2", "new": "2 * value"},
        {"final": "doubled"},
    )
    return {"model": model, "allowWrites": True}


async def first_yes_then_wait(daemon: Daemon, params: dict[str, Any]) -> Any:
    return await (approve(params) if len(daemon.confirms) == 1 else never_answer(params))


async def at_second_approval(start_daemon: StartDaemon, settings: dict[str, Any]) -> Daemon:
    """A daemon that accepted the first edit, while the second waits for a yes."""
    first = await start_daemon(settings)
    first.answer = lambda params: first_yes_then_wait(first, params)
    first.send("counterfoil/run", {"goal": "make double() double"})
    await first.until(lambda: len(first.confirms) == 2)
    return first


async def killed_at_second_approval(start_daemon: StartDaemon, settings: dict[str, Any]) -> None:
    """A daemon that accepted the first edit is killed while the second waits for a yes."""
    await (await at_second_approval(start_daemon, settings)).kill()


def edit_receipts(root: Path) -> list[dict[str, Any]]:
    log = root / ".counterfoil" / "receipts.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [line for line in lines if line.get("tool") == "edit_file"]


async def test_a_fresh_daemon_lists_the_run_a_killed_one_left_as_interrupted(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)

    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    assert session["state"] == "interrupted"
    assert session["goal"] == "make double() double"
    assert session["pending"] == {
        "toolCallId": "call-2",
        "tool": "edit_file",
        "arguments": {"path": "app.py", "old": "value * 2", "new": "2 * value"},
    }
    written = (demo_project / "app.py").read_bytes()
    assert session["filesChanged"] == [
        {"path": "app.py", "toolCallId": "call-1", "tool": "edit_file", "sha256": sha256(written)}
    ]
    assert session["problem"] is None


async def test_resume_after_a_crash_asks_the_open_approval_again_against_the_disk(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    app = demo_project / "app.py"
    on_disk = app.read_bytes()
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    result = await second.request("counterfoil/resume", {"runId": session["runId"]})

    (fresh,) = second.confirms
    assert fresh["toolCallId"] == "call-2"
    assert fresh["preview"]["baseSha256"] == sha256(on_disk)
    assert fresh["preview"]["proposedText"] == on_disk.decode().replace("value * 2", "2 * value")
    assert result["completed"] is True and result["resumed"] is True
    assert result["final"] == "doubled"
    # The verdict judges the whole run: call-1, approved before the crash, counts too.
    assert result["verdict"]["approved"] == ["call-1", "call-2"]
    assert app.read_text().endswith("return 2 * value\n")
    assert [receipt["tool_call_id"] for receipt in edit_receipts(demo_project)] == [
        "call-1",
        "call-2",
    ]  # the first edit is not replayed
    (started,) = second.told("counterfoil/runStarted")
    assert started["runId"] == session["runId"] and started["resumed"] is True
    # The approval asked again is the step it was (the third), and the steps go on from it.
    now = [step for step in second.steps(result) if "earlier" not in step]
    assert [step["step"] for step in now] == [3, 4]
    listed = await second.request("counterfoil/sessions", {})
    assert [item["state"] for item in listed["sessions"]] == ["ended"]


async def test_resume_retells_the_steps_before_the_interruption_from_the_runs_record(
    start_daemon: StartDaemon, start_daemon_over_stdio: StartDaemon, tmp_path: Path
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]
    told_when_asked: list[int] = []

    async def answer(params: dict[str, Any]) -> Any:
        told_when_asked.append(sum("earlier" in event for event in second.events))
        return await approve(params)

    second.answer = answer

    result = await second.request("counterfoil/resume", {"runId": session["runId"]})

    assert told_when_asked == [2]  # the story is told before the open approval is asked again
    told = second.steps(result)
    earlier = [step for step in told if "earlier" in step]
    assert [(step["step"], step["earlier"]) for step in earlier] == [
        (1, "before the interruption"),
        (2, "before the interruption"),
    ]
    assert earlier[0]["action"] == {"tool": "read_file", "arguments": {"path": "app.py"}}
    # What the model read after it: the observation, then the task and what was done so far.
    assert earlier[1]["result"].startswith(
        "edited app.py\n\nProgress (the run's record, not an answer):\n- task: "
    )
    assert "\n- done: edited app.py\n" in earlier[1]["result"]
    assert told[:2] == earlier  # told first, before the steps of this part


async def test_a_file_changed_while_no_daemon_ran_is_not_overwritten_on_resume(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    app = demo_project / "app.py"
    app.write_text(app.read_text() + "# saved by the person\n")
    saved = app.read_bytes()
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    result = await second.request("counterfoil/resume", {"runId": session["runId"]})

    assert second.confirms == []  # the model must read the file again first
    assert result["verdict"]["refused"] == ["call-2"]
    (refused,) = [e for e in result["verdict"]["effects"] if e["toolCallId"] == "call-2"]
    assert refused["reason"] == "read the existing file before changing it"
    assert app.read_bytes() == saved


async def test_inspect_says_where_the_run_stopped_and_what_changed_since(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    (demo_project / "app.py").write_text("def double(value):\n    return value + value\n")
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    shown = await second.request("counterfoil/inspect", {"runId": session["runId"]})

    assert shown["state"] == "interrupted"
    assert shown["lastAction"] == '{"new":"* 2","old":"* 1","path":"app.py","tool":"edit_file"}'
    assert shown["lastEvidence"] and len(shown["lastEvidence"]) <= 160
    assert shown["nextStep"] == "ask again for call-2 (edit_file app.py), as a new proposal"
    assert shown["changedSinceRead"] == ["app.py"]
    assert second.confirms == []  # inspecting runs nothing


async def test_a_steered_resume_adds_one_operator_message(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    await second.request(
        "counterfoil/resume", {"runId": session["runId"], "steer": "keep the diff small"}
    )

    log = demo_project.resolve() / ".counterfoil" / "receipts.jsonl"
    record = SessionStore(log).load(session["runId"])
    steering = [
        content for role, content in record.checkpoint.messages if "keep the diff small" in content
    ]
    assert steering == ["Operator steering:\nkeep the diff small"]


async def test_a_steering_message_is_in_the_runs_record_as_the_persons(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    from counterfoil.sessions.decisions import read_entries

    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    await second.request(
        "counterfoil/resume", {"runId": session["runId"], "steer": "keep the diff small"}
    )

    log = demo_project.resolve() / ".counterfoil" / "receipts.jsonl"
    folder = SessionStore(log).run_folder(session["runId"])
    steered = [e for e in read_entries(folder / "decisions.jsonl") if e["kind"] == "steered"]
    assert [(e["text"], e["by"]) for e in steered] == [("keep the diff small", getpass.getuser())]


async def test_a_proposal_asked_again_on_a_steered_resume_says_it_came_before_the_message(
    start_daemon: StartDaemon, start_daemon_over_stdio: StartDaemon, tmp_path: Path
) -> None:
    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]
    second.answer = approve

    await second.request(
        "counterfoil/resume", {"runId": session["runId"], "steer": "keep the diff small"}
    )

    (asked,) = second.confirms
    assert asked["toolCallId"] == "call-2"
    assert asked["note"].startswith("proposed before your message: the model has not read it")


async def test_a_shutdown_with_an_open_approval_leaves_the_run_resumable(
    start_daemon: StartDaemon,
    start_daemon_over_stdio: StartDaemon,
    demo_project: Path,
    tmp_path: Path,
) -> None:
    settings = two_edits(tmp_path)
    await (
        await at_second_approval(start_daemon_over_stdio, settings)
    ).stop()  # a reload: shutdown, exit
    second = await start_daemon(settings)

    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]

    assert session["state"] == "interrupted"
    assert session["pending"]["toolCallId"] == "call-2"


async def test_a_resume_while_a_run_goes_is_refused_and_the_daemon_stays_up(
    start_daemon: StartDaemon, start_daemon_over_stdio: StartDaemon, tmp_path: Path
) -> None:
    from pygls.exceptions import JsonRpcException

    settings = two_edits(tmp_path)
    await killed_at_second_approval(start_daemon_over_stdio, settings)
    second = await start_daemon(settings)
    second.answer = never_answer
    (session,) = (await second.request("counterfoil/sessions", {}))["sessions"]
    second.send("counterfoil/resume", {"runId": session["runId"]})
    await second.until(lambda: len(second.confirms) == 1)

    with pytest.raises(JsonRpcException) as refused:
        await second.request("counterfoil/resume", {"runId": session["runId"]})

    assert refused.value.code == -32001
    assert (await second.request("counterfoil/status", {}))["running"] is True
    await asyncio.sleep(0)

"""The run panel's events: the run's state, the model's text, each step's call and evidence,
stored objects, and a verification that reports the files too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from .conftest import PYTEST_ARGV, StartDaemon, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


async def test_a_run_is_told_what_its_model_does_from_its_start(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)

    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})

    told = daemon.told("counterfoil/runActivity")
    assert {item["runId"] for item in told} == {result["runId"]}
    loading = [(item["phase"], item["step"]) for item in told[:2]]
    assert loading == [("loading", None), ("loaded", None)]
    assert told[0]["message"].startswith("loading scripted:")
    steps = [event["step"] for event in daemon.steps(result)]
    generated = [item["step"] for item in told if item["phase"] == "generated"]
    assert generated == steps  # each step's end, as its event numbers it


async def test_a_run_reports_its_start_text_steps_and_end(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)

    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})

    run_id = result["runId"]
    assert daemon.told("counterfoil/runStarted") == [
        {
            "runId": run_id,
            "conversationId": run_id,
            "goal": "make double() double",
            "followUp": False,
            "agentsFile": None,
        }
    ]
    assert daemon.told("counterfoil/runState") == [
        {"runId": run_id, "state": "running", "reason": None},
        {"runId": run_id, "state": "ended", "reason": "completed"},
    ]
    texts = daemon.told("counterfoil/modelText")
    assert [(t["step"], t["text"], t["thinking"]) for t in texts] == [
        (event["step"], event["response"], False) for event in daemon.steps(result)
    ]
    read, edit, command, final = daemon.steps(result)
    assert daemon.events == daemon.steps(result)
    assert all(event["runId"] == run_id for event in daemon.steps(result))
    assert (read["toolCallId"], read["receiptId"], read["outputSha256"]) == (None, None, None)
    edit_receipt, command_receipt = daemon.receipts
    assert edit["toolCallId"] == edit_receipt["tool_call_id"] == "call-1"
    assert edit["resultSha256"] == edit_receipt["result_sha256"]
    assert edit["outputSha256"] is None
    assert command["toolCallId"] == "call-2"
    assert command["outputSha256"] == command_receipt["output_sha256"]
    assert command["receiptId"] == command_receipt["receipt_id"]
    assert final["toolCallId"] is None and final["state"] is None
    for receipt in daemon.receipts:
        assert receipt["run_id"] == run_id and receipt["time"] and receipt["approval"]
    assert command_receipt["argv"] == PYTEST_ARGV and command_receipt["exit_status"] == 0

    output = await daemon.request("counterfoil/object", {"sha256": command["outputSha256"]})
    assert output["found"] is True and output["truncated"] is False
    assert output["text"] in command["result"]
    assert "passed" in output["text"]


@pytest.mark.parametrize(
    "params", [{"sha256": "../receipts.jsonl"}, {"sha256": "A" * 64}, {"sha256": "0" * 63}, {}]
)
async def test_object_names_must_be_64_hex_characters(
    start_daemon: StartDaemon, params: dict[str, Any]
) -> None:
    daemon = await start_daemon()
    with pytest.raises(JsonRpcException) as raised:
        await daemon.request("counterfoil/object", params)
    assert raised.value.code == -32602


async def test_an_object_not_stored_is_not_found(start_daemon: StartDaemon) -> None:
    daemon = await start_daemon()
    assert await daemon.request("counterfoil/object", {"sha256": "0" * 64}) == {
        "sha256": "0" * 64,
        "found": False,
        "text": None,
        "bytes": 0,
        "truncated": False,
    }


async def test_verify_reports_the_chain_and_files_changed_since(
    start_daemon: StartDaemon, demo_project: Path, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)
    await daemon.request("counterfoil/run", {"goal": "make double() double"})
    (demo_project / "app.py").write_text("changed by hand\n")

    verified = await daemon.request("counterfoil/verifyReceipts", {})

    assert verified["chainOk"] is True and verified["chainError"] is None
    assert verified["ok"] is False
    assert verified["drift"] == ["app.py changed after call-1"]
    assert verified["count"] == 2


async def test_verify_of_a_broken_chain_does_not_say_the_files_are_unchanged(
    start_daemon: StartDaemon, demo_project: Path, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)
    await daemon.request("counterfoil/run", {"goal": "make double() double"})
    log = demo_project / ".counterfoil/receipts.jsonl"
    log.write_text(log.read_text().replace('"edited app.py"', '"edited app.py!"', 1))

    verified = await daemon.request("counterfoil/verifyReceipts", {})

    assert verified["chainOk"] is False and verified["line"] == 1
    assert verified["drift"] is None


async def test_a_protected_path_is_neutral_for_the_model_and_named_for_the_person(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    (demo_project / ".env").write_text("TOKEN=secret\n")
    model = script(
        tmp_path / "read-env.jsonl",
        {"tool": "read_file", "path": ".env"},
        {"tool": "read_file", "path": "missing.py"},
        {"final": "done"},
    )
    daemon = await start_daemon({"model": model})
    result = await daemon.request("counterfoil/run", {"goal": "read the secrets"})

    protected, missing, _ = daemon.steps(result)
    assert protected["result"] == missing["result"] == "error: path is not accessible"
    assert protected["protectedBy"] == "the built-in name .env"
    assert missing["protectedBy"] is None


async def test_a_new_file_in_new_folders_shows_them_and_creates_them_on_approval(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "new-folders.jsonl",
        {"tool": "write_file", "path": "src/pkg/mod.py", "content": "x = 1\n"},
        {"final": "done"},
    )
    daemon = await start_daemon({"model": model, "allowWrites": True})
    await daemon.request("counterfoil/run", {"goal": "add a module"})

    assert daemon.confirms[0]["preview"]["newFolders"] == ["src", "src/pkg"]
    assert (demo_project / "src/pkg/mod.py").read_text() == "x = 1\n"
    assert daemon.receipts[0]["created_folders"] == ["src", "src/pkg"]


async def test_a_final_answer_not_taken_as_the_end_is_sent_with_what_the_model_was_told(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(
        tmp_path / "held.jsonl",
        {"tool": "read_file", "path": "app.py"},
        {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"},
        {"final": "done, and the tests pass"},
        {"final": "done"},
    )
    daemon = await start_daemon(
        {
            "model": model,
            "allowWrites": True,
            "allowedCommands": [PYTEST_ARGV],
            "checkFinalAnswer": True,
        }
    )

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    *_, held, final = daemon.steps(result)
    assert held["action"] == {"final": "done, and the tests pass"}
    assert held["finalHeld"].startswith("Not ended yet: your answer says the task is done")
    assert "- No command has run since the last change" in held["finalHeld"]
    assert "finalHeld" not in final
    assert (result["reason"], result["final"]) == ("completed", "done")

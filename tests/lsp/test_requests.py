"""Validation from the client, settings, progress, and bad input that must not hurt the daemon."""

from __future__ import annotations

import asyncio
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcMethodNotFound,
)

from counterfoil.lsp.transport import MAX_MESSAGE_BYTES

from .conftest import StartDaemon, edit_app_model, reject, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


VALIDATE_ARGV = ["python", "validate.py"]


async def test_run_validation_asks_first_and_returns_its_receipt(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon({"allowedCommands": [VALIDATE_ARGV]})

    answer = await daemon.request("counterfoil/runValidation", {"argv": VALIDATE_ARGV})

    [confirm] = daemon.confirms
    assert confirm["tool"] == "run_command"
    assert confirm["preview"] == {
        "kind": "command",
        "argv": VALIDATE_ARGV,
        "cwd": str(demo_project.resolve()),
        "timeoutSeconds": 30.0,
        "runsAs": {"mode": "off", "mechanism": "none", "network": True},
    }
    assert answer["observation"].startswith("status: 1\noutput:\nFAIL: greet('Ada')")
    receipt = answer["receipt"]
    assert receipt["tool_call_id"] == confirm["toolCallId"]
    assert receipt["arguments"] == {"argv": VALIDATE_ARGV}
    assert receipt["exit_state"] == "error"
    assert receipt["result"] == answer["observation"]
    assert daemon.receipts == [receipt]
    assert (answer["state"], answer["effect"]["exitStatus"]) == ("approved", 1)
    assert answer["receiptId"] == receipt["receipt_id"]
    listed = await daemon.request("counterfoil/receipts", {})
    assert listed["receipts"] == [receipt]


async def test_run_validation_refused_or_denied_leaves_no_receipt(
    start_daemon: StartDaemon,
) -> None:
    daemon = await start_daemon({"allowedCommands": [VALIDATE_ARGV]})

    not_allowed = await daemon.request("counterfoil/runValidation", {"argv": ["rm", "-rf", "."]})
    assert not_allowed["observation"] == "error: command is not allowed"
    assert (not_allowed["receipt"], not_allowed["state"]) == (None, "refused")
    assert daemon.confirms == []

    daemon.answer = reject
    denied = await daemon.request("counterfoil/runValidation", {"argv": VALIDATE_ARGV})
    assert denied["observation"] == "error: operator denied the tool action"
    assert (denied["receipt"], denied["state"]) == (None, "rejected")
    assert (
        denied["toolCallId"] == denied["effect"]["toolCallId"] == daemon.confirms[0]["toolCallId"]
    )
    assert daemon.receipts == []


async def test_bad_requests_get_errors_and_the_daemon_keeps_serving(
    start_daemon_over_stdio: StartDaemon, demo_project: Path
) -> None:
    before = {p.name: p.read_bytes() for p in demo_project.iterdir() if p.is_file()}
    daemon = await start_daemon_over_stdio(
        {"allowWrites": True, "allowedCommands": [VALIDATE_ARGV]}
    )

    with pytest.raises(JsonRpcMethodNotFound):
        await daemon.request("counterfoil/doesNotExist", {})
    bad_params: list[tuple[str, Any]] = [
        ("counterfoil/run", {"goal": 42}),
        ("counterfoil/run", {}),
        ("counterfoil/run", ["fix", "it"]),
        ("counterfoil/run", {"goal": "x" * 50_000}),
        ("counterfoil/runValidation", {"argv": "python validate.py"}),
        ("counterfoil/runValidation", {"argv": []}),
        ("counterfoil/runValidation", {"argv": ["python", 3]}),
        ("counterfoil/status", "please"),
        ("counterfoil/receipts", 7),
    ]
    for method, params in bad_params:
        with pytest.raises(JsonRpcInvalidParams):
            await daemon.request(method, params)

    with pytest.raises(JsonRpcException) as oversized:
        await daemon.request("counterfoil/run", {"goal": "y" * (MAX_MESSAGE_BYTES + 10)}, msg_id=77)
    assert "exceeds" in oversized.value.message

    writer = daemon.client.protocol.writer
    assert writer is not None
    for body in (b"{not json", b"[1, 2]", json.dumps({"jsonrpc": "2.0", "id": {}}).encode()):
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)  # type: ignore[union-attr]

    status = await daemon.request("counterfoil/status")
    assert status["running"] is False
    assert daemon.confirms == []
    assert {p.name: p.read_bytes() for p in demo_project.iterdir() if p.is_file()} == before
    assert daemon.receipts == []


async def test_settings_come_from_initialization_and_configuration_changes(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon({"unknownKey": 1})
    status = await daemon.request("counterfoil/status", {})
    assert isinstance(status.pop("modelOnDisk"), bool)  # this machine's hub cache decides
    assert status.pop("modelDownloadBytes", "missing") != "missing"
    table = status.pop("tools")
    assert [(tool["name"], tool["enabled"]) for tool in table] == [
        ("list_files", True),
        ("read_file", True),
        ("search_files", True),
        ("write_file", False),
        ("edit_file", False),
        ("patch_file", False),  # in place of edit_file with editForm diff
        ("run_command", False),
        ("mcp_call", False),  # on only with the person's MCP servers (test_mcp_daemon.py)
    ]
    assert status == {
        "root": str(demo_project.resolve()),
        "model": "qwen3-4b",
        "modelState": "unloaded",
        "allowWrites": False,
        "allowedCommands": [],
        "availableTools": ["list_files", "read_file", "search_files"],
        "receiptLog": str(demo_project.resolve() / ".counterfoil" / "receipts.jsonl"),
        "running": False,
        "conversation": None,
    }

    await daemon.configure(
        {"allowWrites": True, "allowedCommands": [VALIDATE_ARGV], "receiptLog": "audit/log.jsonl"}
    )
    status = await daemon.request("counterfoil/status", {})
    assert status["allowWrites"] is True
    assert status["allowedCommands"] == [VALIDATE_ARGV]
    assert status["availableTools"] == [
        "edit_file",
        "list_files",
        "read_file",
        "run_command",
        "search_files",
        "write_file",
    ]
    assert status["receiptLog"] == str(demo_project.resolve() / "audit" / "log.jsonl")

    await daemon.configure(
        {
            "allowWrites": "yes",
            "maxSteps": 0,
            "allowedCommands": [VALIDATE_ARGV],
            "receiptLog": "audit/log.jsonl",
        }
    )
    await daemon.until(lambda: daemon.client.messages, types.WINDOW_SHOW_MESSAGE)
    [shown] = daemon.client.messages
    assert shown.type == types.MessageType.Error
    assert "allowWrites" in shown.message and "maxSteps" in shown.message
    assert await daemon.request("counterfoil/status", {}) == status


async def test_an_invalid_initialization_option_falls_back_to_its_default_alone(
    start_daemon: StartDaemon,
) -> None:
    daemon = await start_daemon({"allowedCommands": "python validate.py", "allowWrites": True})

    status = await daemon.request("counterfoil/status", {})

    assert status["allowWrites"] is True
    assert status["allowedCommands"] == []
    await daemon.until(
        lambda: any("allowedCommands" in m.message for m in daemon.client.messages),
        types.WINDOW_SHOW_MESSAGE,
    )


async def test_a_settings_change_waits_for_the_next_run(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    model = edit_app_model(tmp_path, "done")
    daemon = await start_daemon({"model": model, "allowWrites": True})
    release = asyncio.Event()

    async def approve_later(params: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return {"approved": True}

    daemon.answer = approve_later
    pending = daemon.send("counterfoil/run", {"goal": "fix app.py"})
    await daemon.until(lambda: daemon.confirms)
    await daemon.configure({"model": model, "allowWrites": False})
    release.set()

    first = await pending
    assert first["modifiedFiles"] == ["app.py"]
    second = await daemon.request("counterfoil/run", {"goal": "fix app.py again"})
    assert daemon.steps(second)[1]["result"] == "error: tool is not enabled: edit_file"


async def test_a_tool_not_enabled_names_the_setting_that_enables_it_to_the_person_only(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    daemon = await start_daemon({"model": edit_app_model(tmp_path, "done")})
    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})
    refused = daemon.steps(result)[1]
    assert refused["result"] == "error: tool is not enabled: edit_file"  # what the model read
    assert refused["enabledBy"] == "allowWrites"
    assert daemon.steps(result)[0]["enabledBy"] is None


async def test_progress_model_state_and_trace_are_reported(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    model = script(tmp_path / "list.jsonl", {"tool": "list_files"}, {"final": "listed"})
    daemon = await start_daemon({"model": model})

    result = await daemon.request("counterfoil/run", {"goal": "look around"})

    assert result["reason"] == "completed"
    await daemon.until(
        lambda: (
            len(daemon.client.progress_reports) == 2
            and all(
                reports and reports[-1].kind == "end"
                for reports in daemon.client.progress_reports.values()
            )
        ),
        types.PROGRESS,
    )
    titles = sorted(reports[0].title for reports in daemon.client.progress_reports.values())
    assert titles == ["Counterfoil", "Loading model"]
    run_reports = next(
        r for r in daemon.client.progress_reports.values() if r[0].title == "Counterfoil"
    )
    assert [r.message for r in run_reports[1:-1]] == [
        "step 1: reading the prompt…",
        "step 1: response ready",
        "step 2: reading the prompt…",
        "step 2: response ready",
    ]
    states = [state["state"] for state in daemon.model_states]
    assert states[:2] == ["loading", "ready"]
    assert states.count("generating") == 2
    assert all(state["model"] == model for state in daemon.model_states)
    await daemon.until(
        lambda: any("run ended: completed" in m.message for m in daemon.client.log_messages),
        types.WINDOW_LOG_MESSAGE,
    )
    trace = [m.message for m in daemon.client.log_messages]
    assert 'step 1 response: {"tool": "list_files"}' in trace
    assert 'step 1 action: {"tool": "list_files", "arguments": {}}' in trace
    assert any(line.startswith("step 1 observation: ") and "file app.py" in line for line in trace)
    status = await daemon.request("counterfoil/status", {})
    assert status["modelState"] == "ready"


async def test_a_model_that_fails_to_load_ends_the_run_and_the_daemon_stays(
    start_daemon: StartDaemon,
) -> None:
    daemon = await start_daemon({"model": "scripted:no-such-script.jsonl"})

    result = await daemon.request("counterfoil/run", {"goal": "anything"})

    assert result["completed"] is False
    assert result["reason"] == "model_error"
    assert "no-such-script.jsonl" in result["error"]
    status = await daemon.request("counterfoil/status", {})
    # Said once, by the run's result (the editor shows it): no error message besides.
    assert not any(m.type == types.MessageType.Error for m in daemon.client.messages)
    assert status["modelState"] == "error"
    assert status["running"] is False


async def test_a_crafted_gguf_model_is_one_sentence_and_the_daemon_stays(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    pytest.importorskip("mlx.core")
    crafted = tmp_path / "crafted.gguf"  # one key whose length claims 10^9 bytes (it crashed MLX)
    crafted.write_bytes(
        b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 10**9) + b"general.architecture" + b"\0" * 41
    )
    daemon = await start_daemon({"model": str(crafted), "engine": "mlx"})

    result = await daemon.request("counterfoil/run", {"goal": "anything"})

    assert result["reason"] == "model_error"
    assert "crafted.gguf is not a GGUF file Counterfoil can read" in result["error"]
    assert "\n" not in result["error"]
    status = await daemon.request("counterfoil/status", {})
    assert status["modelState"] == "error" and status["running"] is False


async def test_a_broken_receipt_log_is_reported_not_served(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon({"allowedCommands": [VALIDATE_ARGV]})
    await daemon.request("counterfoil/runValidation", {"argv": VALIDATE_ARGV})
    await daemon.request("counterfoil/runValidation", {"argv": VALIDATE_ARGV})
    log = demo_project / ".counterfoil" / "receipts.jsonl"
    first, second = log.read_text().splitlines()
    log.write_text(second + "\n" + first + "\n")

    verified = await daemon.request("counterfoil/verifyReceipts", {})
    listed = await daemon.request("counterfoil/receipts", {})

    assert verified["ok"] is False
    assert verified["line"] == 1
    assert verified["error"].startswith("line 1:")
    assert listed["receipts"] == []
    assert listed["error"] == verified["error"]
    run = await daemon.request("counterfoil/run", {"goal": "anything"})
    assert run["reason"] == "receipt_log_error"
    assert verified["error"] in run["error"]
    validation = await daemon.request("counterfoil/runValidation", {"argv": VALIDATE_ARGV})
    assert validation["observation"].startswith("error: could not open the receipt log")
    assert validation["receipt"] is None
    assert log.read_text() == second + "\n" + first + "\n"

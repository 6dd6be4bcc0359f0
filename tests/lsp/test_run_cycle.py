"""The agent cycle over the protocol: approve, reject, stale bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from .conftest import PYTEST_ARGV, StartDaemon, edit_app_model, reject, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_full_cycle_edits_validates_and_keeps_verified_receipts(
    start_daemon: StartDaemon, demo_project: Path, fix_app_settings: dict[str, Any]
) -> None:
    base = (demo_project / "app.py").read_bytes()
    daemon = await start_daemon(fix_app_settings)

    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})

    assert result["completed"] is True
    assert result["reason"] == "completed"
    assert result["final"] == "changed and validated app.py"
    assert result["modifiedFiles"] == ["app.py"]
    assert result["error"] is None
    assert [event["action"] for event in daemon.steps(result)] == [
        {"tool": "read_file", "arguments": {"path": "app.py"}},
        {"tool": "edit_file", "arguments": {"path": "app.py", "old": "1", "new": "2"}},
        {"tool": "run_command", "arguments": {"argv": PYTEST_ARGV}},
        {"final": "changed and validated app.py"},
    ]
    assert daemon.steps(result)[2]["result"].startswith("status: 0")
    assert daemon.events == daemon.steps(result)

    edit_confirm, command_confirm = daemon.confirms
    assert edit_confirm["toolCallId"] == "call-1"
    assert edit_confirm["tool"] == "edit_file"
    assert edit_confirm["arguments"] == {"path": "app.py", "old": "1", "new": "2"}
    preview = edit_confirm["preview"]
    assert preview["kind"] == "edit"
    assert preview["path"] == "app.py"
    assert preview["baseSha256"] == sha256(base)
    assert preview["uri"] == (demo_project / "app.py").as_uri()
    (document,) = preview["edit"]["documentChanges"]
    assert document["textDocument"]["uri"] == preview["uri"]
    assert [edit["newText"] for edit in document["edits"]] == ["    return value * 2\n"]
    shown = preview["proposedText"].encode()
    written = (demo_project / "app.py").read_bytes()
    assert written == shown == base.replace(b"* 1", b"* 2")
    assert preview["proposedSha256"] == sha256(written)

    assert command_confirm["preview"] == {
        "kind": "command",
        "argv": PYTEST_ARGV,
        "cwd": str(demo_project.resolve()),
        "timeoutSeconds": 30.0,
        "runsAs": {"mode": "off", "mechanism": "none", "network": True},
    }

    listed = await daemon.request("counterfoil/receipts", {})
    assert listed["error"] is None
    assert listed["logPath"] == str(demo_project.resolve() / ".counterfoil" / "receipts.jsonl")
    assert [r["tool"] for r in listed["receipts"]] == ["edit_file", "run_command"]
    assert listed["receipts"] == daemon.receipts
    assert listed["receipts"][0]["changed_artifacts"] == ["app.py"]
    assert listed["receipts"][1]["exit_state"] == "ok"
    assert await daemon.request("counterfoil/verifyReceipts", {}) == {
        "ok": True,
        "count": 2,
        "error": None,
        "line": None,
        "chainOk": True,
        "chainError": None,
        "drift": [],
    }


async def test_reject_leaves_the_file_and_the_log_untouched(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    before = (demo_project / "app.py").read_bytes()
    model = edit_app_model(tmp_path, "gave up")
    daemon = await start_daemon({"model": model, "allowWrites": True})

    async def fail(params: dict[str, Any]) -> Any:
        raise RuntimeError("the editor could not show the diff")

    async def approve_loosely(params: dict[str, Any]) -> Any:
        return {"approved": "yes"}

    for answer in (reject, fail, approve_loosely):
        daemon.answer = answer
        result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

        assert result["completed"] is True
        assert daemon.steps(result)[1]["result"] == "error: operator denied the tool action"
        assert result["modifiedFiles"] == []
    assert len(daemon.confirms) == 3
    assert (demo_project / "app.py").read_bytes() == before
    assert daemon.receipts == []
    listed = await daemon.request("counterfoil/receipts", {})
    assert listed["receipts"] == []


async def test_edit_refuses_bytes_changed_while_the_confirm_was_pending(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    model = edit_app_model(tmp_path, "done")
    daemon = await start_daemon({"model": model, "allowWrites": True})
    other = b"def double(value: int) -> int:\n    return value + value\n"

    async def change_then_approve(params: dict[str, Any]) -> dict[str, Any]:
        (demo_project / "app.py").write_bytes(other)
        return {"approved": True}

    daemon.answer = change_then_approve

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert daemon.steps(result)[1]["result"] == "error: file changed since it was read"
    assert (demo_project / "app.py").read_bytes() == other
    assert result["modifiedFiles"] == []
    assert daemon.receipts == []


async def test_new_file_preview_carries_the_whole_content_and_no_base(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    content = "# Notes\n\nsnowman \u2603 and a clef \U0001d11e\n"
    model = script(
        tmp_path / "notes.jsonl",
        {"tool": "write_file", "path": "NOTES.md", "content": content},
        {"final": "wrote notes"},
    )
    daemon = await start_daemon({"model": model, "allowWrites": True})

    result = await daemon.request("counterfoil/run", {"goal": "write notes"})

    assert result["modifiedFiles"] == ["NOTES.md"]
    [confirm] = daemon.confirms
    uri = (demo_project / "NOTES.md").as_uri()
    assert confirm["preview"]["baseSha256"] is None
    assert confirm["preview"]["uri"] == uri
    assert confirm["preview"]["proposedText"] == content
    written = (demo_project / "NOTES.md").read_bytes()
    assert written == content.encode()
    assert confirm["preview"]["proposedSha256"] == sha256(written)

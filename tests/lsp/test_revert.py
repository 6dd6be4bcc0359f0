"""counterfoil/revert: the same confirm preview as any edit, then a receipt that says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from .conftest import FIXTURES, StartDaemon, approve, reject


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


async def test_a_revert_is_previewed_approved_written_and_receipted(
    start_daemon: StartDaemon, demo_project: Path, fix_app_settings: dict[str, Any]
) -> None:
    original = (FIXTURES / "demo-project" / "app.py").read_text()
    daemon = await start_daemon(fix_app_settings)
    await daemon.request("counterfoil/run", {"goal": "fix app.py"})
    fixed = (demo_project / "app.py").read_text()

    daemon.answer = reject
    rejected = await daemon.request("counterfoil/revert", {"toolCallId": "call-1"})
    assert rejected["observation"] == "error: operator denied the tool action"
    assert (rejected["receipt"], rejected["state"]) == (None, "rejected")
    assert (demo_project / "app.py").read_text() == fixed

    daemon.answer = approve
    result = await daemon.request("counterfoil/revert", {"toolCallId": "call-1"})

    confirm = daemon.confirms[-1]
    assert confirm["tool"] == "revert"
    assert confirm["arguments"] == {"tool_call_id": "call-1", "path": "app.py"}
    assert confirm["preview"]["reverts"] == "call-1"
    assert confirm["preview"]["proposedText"] == original
    assert confirm["preview"]["removesFile"] is False
    assert (demo_project / "app.py").read_text() == original
    assert result["observation"] == "restored app.py (reverts call-1)"
    assert result["receipt"]["reverts"] == "call-1"
    assert result["receipt"] == daemon.receipts[-1]


async def test_a_command_that_changed_no_file_has_nothing_to_revert_and_nobody_is_asked(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)
    await daemon.request("counterfoil/run", {"goal": "fix app.py"})
    asked = len(daemon.confirms)

    result = await daemon.request("counterfoil/revert", {"toolCallId": "call-2"})

    assert result["observation"] == "error: nothing of call-2 can be reverted (it changed no file)"
    assert result["receipt"] is None
    assert len(daemon.confirms) == asked


def test_reverting_a_command_is_previewed_as_a_change_set(tmp_path: Path) -> None:
    from counterfoil.actions import ToolAction
    from counterfoil.lsp.approvals.confirm_messages import preview
    from counterfoil.proposals import ChangeSetProposal, FileRestore

    proposal = ChangeSetProposal(
        tool_call_id="call-3",
        action=ToolAction("revert", {"tool_call_id": "call-2"}),
        files=(
            FileRestore("data.txt", "2" * 64, b"before\n", "1" * 64, 0o644, b"after\n", 0o644),
            FileRestore("gen/out.txt", "3" * 64, None, None, None, b"\xff"),
        ),
        left_alone=(("link", "a symlink, not a regular file"),),
        reverts="call-2",
    )

    shown = preview(proposal, tmp_path)

    assert shown["kind"] == "changes" and shown["reverts"] == "call-2"
    assert shown["files"][0] == {
        "path": "data.txt",
        "uri": (tmp_path / "data.txt").as_uri(),
        "expectedSha256": "2" * 64,
        "contentSha256": "1" * 64,
        "removesFile": False,
        "currentText": "after\n",
        "proposedText": "before\n",
        "mode": 0o644,
        "currentMode": 0o644,
        "changesMode": False,
    }
    assert shown["files"][1]["removesFile"] is True
    assert shown["files"][1]["currentText"] is None
    assert shown["leftAlone"] == [{"path": "link", "why": "a symlink, not a regular file"}]


async def test_revert_needs_a_tool_call_id(start_daemon: StartDaemon) -> None:
    daemon = await start_daemon({})
    with pytest.raises(JsonRpcInvalidParams):
        await daemon.request("counterfoil/revert", {"toolCallId": ""})


def test_reverting_a_created_file_is_previewed_as_a_removal(tmp_path: Path) -> None:
    from counterfoil.actions import ToolAction
    from counterfoil.lsp.approvals.confirm_messages import preview
    from counterfoil.proposals import EditProposal

    proposal = EditProposal(
        tool_call_id="call-4",
        action=ToolAction("revert", {"tool_call_id": "call-3", "path": "NOTES.md"}),
        path="NOTES.md",
        base_text="# Notes\n",
        base_sha256="1" * 64,
        proposed_text="",
        proposed_sha256="",
        reverts="call-3",
        removes_file=True,
    )

    assert preview(proposal, tmp_path) == {
        "kind": "edit",
        "path": "NOTES.md",
        "uri": (tmp_path / "NOTES.md").as_uri(),
        "removesFile": True,
        "baseSha256": "1" * 64,
        "proposedSha256": None,
        "proposedText": None,
        "baseText": "# Notes\n",
        "edit": None,
        "reverts": "call-3",
    }

"""A command's effects in the editor: reverting one, and review mode's changes, each a
`changes` preview over the same confirm request, approved or not, with receipts that say so."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import StartDaemon, approve, reject, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


TOOL = (
    "import os, pathlib\n"
    "os.makedirs('gen', exist_ok=True)\n"
    "pathlib.Path('gen/out.txt').write_text('out\\n')\n"
    "pathlib.Path('data.txt').write_text('after\\n')\n"
    "pathlib.Path('notes.txt').write_text('by the tool\\n')\n"
    "os.remove('old.txt')\n"
)
TOOL_ARGV = ["python", "tool.py"]
needs_bubblewrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="review mode needs bubblewrap on Linux"
)


def tool_settings(root: Path, **extra: Any) -> dict[str, Any]:
    (root / "tool.py").write_text(TOOL)
    (root / "data.txt").write_text("before\n")
    (root / "notes.txt").write_text("notes\n")
    (root / "old.txt").write_text("old\n")
    model = script(
        root.parent / "tool-model.jsonl",
        {"tool": "run_command", "argv": TOOL_ARGV},
        {"final": "done"},
    )
    return {"model": model, "allowWrites": True, "allowedCommands": [TOOL_ARGV], **extra}


def by_path(preview: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["path"]: item for item in preview["files"]}


async def test_reverting_a_command_previews_every_file_and_leaves_one_changed_since_alone(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon(tool_settings(demo_project))
    await daemon.request("counterfoil/run", {"goal": "run the tool"})
    (demo_project / "notes.txt").write_text("the person's edit\n")

    result = await daemon.request("counterfoil/revert", {"toolCallId": "call-1"})

    preview = daemon.confirms[-1]["preview"]
    assert (preview["kind"], preview["reverts"]) == ("changes", "call-1")
    files = by_path(preview)
    assert sorted(files) == ["data.txt", "gen/out.txt", "old.txt"]
    assert (files["data.txt"]["currentText"], files["data.txt"]["proposedText"]) == (
        "after\n",
        "before\n",
    )
    assert files["gen/out.txt"]["removesFile"] is True
    assert files["old.txt"]["currentText"] is None and files["old.txt"]["proposedText"] == "old\n"
    assert [item["path"] for item in preview["leftAlone"]] == ["notes.txt"]
    assert (demo_project / "data.txt").read_text() == "before\n"
    assert (demo_project / "old.txt").read_text() == "old\n"
    assert not (demo_project / "gen" / "out.txt").exists()
    assert (demo_project / "notes.txt").read_text() == "the person's edit\n"
    assert result["receipt"]["reverts"] == "call-1"
    assert result["receipt"] == daemon.receipts[-1]


async def test_a_rejected_command_revert_changes_nothing_and_leaves_no_receipt(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon(tool_settings(demo_project))
    await daemon.request("counterfoil/run", {"goal": "run the tool"})
    receipts = len(daemon.receipts)
    daemon.answer = reject

    result = await daemon.request("counterfoil/revert", {"toolCallId": "call-1"})

    assert (result["receipt"], result["state"]) == (None, "rejected")
    assert (demo_project / "data.txt").read_text() == "after\n"
    assert len(daemon.receipts) == receipts


@needs_bubblewrap
async def test_review_mode_shows_the_commands_changes_and_only_accept_applies_them(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon(tool_settings(demo_project, commandSandbox="review"))

    await daemon.request("counterfoil/run", {"goal": "run the tool"})

    command, review = daemon.confirms[-2:]
    assert command["preview"]["kind"] == "command"
    assert (review["tool"], review["toolCallId"]) == ("review", command["toolCallId"])
    preview = review["preview"]
    assert (preview["kind"], preview["reverts"]) == ("changes", None)
    assert preview["ran"] == {
        "argv": TOOL_ARGV,
        "exitStatus": 0,
        "timedOut": False,
        "mode": "review",
        "mechanism": "bubblewrap",
        "network": False,
    }
    files = by_path(preview)
    assert sorted(files) == ["data.txt", "gen/out.txt", "notes.txt", "old.txt"]
    assert files["data.txt"]["proposedText"] == "after\n"
    assert files["old.txt"]["removesFile"] is True
    assert (demo_project / "gen" / "out.txt").read_text() == "out\n"
    assert not (demo_project / "old.txt").exists()
    receipt = daemon.receipts[-1]
    assert receipt["sandbox"] == {
        "mode": "review",
        "mechanism": "bubblewrap",
        "network": False,
        "unix_sockets": False,
    }
    assert receipt["review"]["decision"] == "accepted"
    assert sorted(receipt["review"]["applied"]) == sorted(files)


@needs_bubblewrap
async def test_review_mode_discards_the_changes_on_reject(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon(tool_settings(demo_project, commandSandbox="review"))

    async def approve_the_command_only(params: dict[str, Any]) -> dict[str, Any]:
        return await (reject if params["tool"] == "review" else approve)(params)

    daemon.answer = approve_the_command_only
    await daemon.request("counterfoil/run", {"goal": "run the tool"})

    assert daemon.confirms[-1]["tool"] == "review"
    assert (demo_project / "data.txt").read_text() == "before\n"
    assert (demo_project / "old.txt").exists() and not (demo_project / "gen").exists()
    assert daemon.receipts[-1]["review"]["decision"] == "rejected"

"""Whether Revert is offered for a receipt is the daemon's word (`revertable` on every receipt
it sends), decided by the checks its revert makes of the receipt, so the two always agree."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import log_path, make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.lsp.session import Session
from counterfoil.proposals import ChangeSetProposal, ToolProposal
from counterfoil.protocol import wire
from counterfoil.receipts import EffectReceipt

from .conftest import RecordingChannel, StartDaemon, reject, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


CHANGE_A_FILE = [sys.executable, "-c", "open('data.txt', 'w').write('after')"]
CHANGE_NOTHING = [sys.executable, "-c", "pass"]


def workspace(root: Path, review: bool | None = None, **policy: Any) -> Workspace:
    """A workspace on `root` logging beside it; it approves everything but, when `review` is
    False, a reviewed command's changes."""

    def answer(proposal: ToolProposal) -> bool:
        reviewing = isinstance(proposal, ChangeSetProposal) and proposal.reverts is None
        return review is not False or not reviewing

    commands = (tuple(CHANGE_A_FILE), tuple(CHANGE_NOTHING))
    return make_workspace(
        root,
        logged=True,
        confirm_proposal=answer,
        allow_writes=True,
        allowed_commands=commands,
        **policy,
    )


def revertable(root: Path) -> dict[str, bool]:
    """Each receipt's call id and its `revertable`, as the daemon's receipts request sends them."""
    session = Session(RecordingChannel())  # type: ignore[arg-type]
    session.root = root
    sent = wire(session.queries.receipts())
    assert sent["error"] is None
    return {receipt["tool_call_id"]: receipt["revertable"] for receipt in sent["receipts"]}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "data.txt").write_text("before")
    return project


def test_a_write_and_an_edit_are_sent_revertable(root: Path) -> None:
    gate = workspace(root)
    gate.execute(ToolAction("write_file", {"path": "new.txt", "content": "x\n"}))
    gate.read_file("data.txt")
    gate.execute(ToolAction("edit_file", {"path": "data.txt", "old": "before", "new": "b"}))

    assert revertable(root) == {"call-1": True, "call-2": True}


def test_a_command_that_changed_a_file_is_sent_revertable(root: Path) -> None:
    workspace(root).execute(ToolAction("run_command", {"argv": CHANGE_A_FILE}))

    assert revertable(root) == {"call-1": True}


def test_a_command_that_changed_no_file_is_sent_not_revertable(root: Path) -> None:
    workspace(root).execute(ToolAction("run_command", {"argv": CHANGE_NOTHING}))

    assert revertable(root) == {"call-1": False}


def test_the_revert_of_an_edit_is_sent_revertable(root: Path) -> None:
    gate = workspace(root)
    gate.read_file("data.txt")
    gate.execute(ToolAction("edit_file", {"path": "data.txt", "old": "before", "new": "b"}))
    gate.revert("call-1")

    assert revertable(root) == {"call-1": True, "call-2": True}


def test_the_revert_of_a_command_is_sent_not_revertable_and_its_revert_is_refused(
    root: Path,
) -> None:
    gate = workspace(root)
    gate.execute(ToolAction("run_command", {"argv": CHANGE_A_FILE}))
    gate.revert("call-1")

    assert revertable(root) == {"call-1": True, "call-2": False}
    assert gate.revert_step("call-2").observation.startswith("error: ")
    assert (root / "data.txt").read_text() == "before"


def test_a_file_receipt_without_its_digests_is_sent_not_revertable(root: Path) -> None:
    older = EffectReceipt("call-1", "edit_file", {"path": "a.py"}, "ok", "edited a.py", ("a.py",))
    ReceiptStore(log_path(root)).put(older)

    assert revertable(root) == {"call-1": False}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="review mode needs bubblewrap")
def test_a_reviewed_command_whose_changes_were_rejected_is_sent_not_revertable(
    root: Path,
) -> None:
    gate = workspace(root, review=False, command_sandbox="review")
    gate.execute(ToolAction("run_command", {"argv": CHANGE_A_FILE}))

    assert (root / "data.txt").read_text() == "before"
    assert revertable(root) == {"call-1": False}


async def test_the_receipts_the_daemon_notifies_say_whether_they_can_be_reverted(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    argv = [sys.executable, "-c", "open('app.py', 'a').write('# ran\\n')"]
    model = script(
        demo_project.parent / "model.jsonl",
        {"tool": "run_command", "argv": argv},
        {"tool": "run_command", "argv": CHANGE_NOTHING},
        {"final": "done"},
    )
    daemon = await start_daemon(
        {"model": model, "allowWrites": True, "allowedCommands": [argv, CHANGE_NOTHING]}
    )
    await daemon.request("counterfoil/run", {"goal": "run them"})
    daemon.answer = reject

    refused = await daemon.request("counterfoil/revert", {"toolCallId": "call-2"})

    assert [receipt["revertable"] for receipt in daemon.receipts] == [True, False]
    assert refused["receipt"] is None and len(daemon.confirms) == 2  # refused before asking

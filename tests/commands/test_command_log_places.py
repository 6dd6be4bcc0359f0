"""Wherever the receipt log is (the root's top level, `.counterfoil/`, outside the root), an
approved command's output and the bytes its snapshots keep go to the log's own folder: the
project gains no folder of Counterfoil's, the command's changes do not list Counterfoil's
files, and a passing command after an edit validates it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.loop import run_verdict
from counterfoil.receipts.content import store_object
from counterfoil.receipts.hold import ObjectHold

PYTHON = sys.executable
CHECK = (PYTHON, "-c", "print('checked')")
PLACES = {
    "top level": (".agent-receipts.jsonl",),
    "counterfoil folder": (".counterfoil", "receipts.jsonl"),
    "outside the root": ("..", "logs", "receipts.jsonl"),
}
ROOT_AFTERWARDS = {
    "top level": [
        ".agent-receipts.jsonl",
        ".agent-receipts.jsonl.counterfoil",
        ".agent-receipts.jsonl.head",
        "app.py",
    ],
    "counterfoil folder": [".counterfoil", "app.py"],
    "outside the root": ["app.py"],
}


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def edit_then_check(root: Path, log: Path) -> tuple[Workspace, str]:
    log.parent.mkdir(parents=True, exist_ok=True)
    workspace = make_workspace(
        root,
        store=ReceiptStore(log, signer=None),
        answer=True,
        allow_writes=True,
        allowed_commands=(CHECK,),
    )
    workspace.read_file("app.py")
    workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}))
    return workspace, workspace.execute(ToolAction("run_command", {"argv": list(CHECK)}))


@pytest.mark.parametrize("place", PLACES)
def test_a_passing_command_validates_the_edit_wherever_the_log_is(
    tmp_path: Path, place: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n")

    workspace, observation = edit_then_check(root, root.joinpath(*PLACES[place]))

    assert observation == "status: 0\noutput:\nchecked\n"
    assert run_verdict(workspace).validation == "passed"
    assert sorted(os.listdir(root)) == ROOT_AFTERWARDS[place]


def test_bytes_are_never_stored_beside_a_hold_of_another_folder(tmp_path: Path) -> None:
    own = tmp_path / ".agent-receipts.jsonl.counterfoil"
    own.mkdir()

    with pytest.raises(ValueError, match="cannot hold objects"):
        store_object(tmp_path, b"bytes", ObjectHold(own))

    assert sorted(os.listdir(tmp_path)) == [".agent-receipts.jsonl.counterfoil"]

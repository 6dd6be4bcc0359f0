"""A write whose bytes are already on disk changes nothing: nobody is asked, no receipt is
written, and the verdict credits no change to it."""

from __future__ import annotations

from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.proposals import ToolProposal
from counterfoil.verdict import compute_verdict


def asking_workspace(root: Path, asked: list[ToolProposal]) -> Workspace:
    def confirm(proposal: ToolProposal) -> bool:
        asked.append(proposal)
        return True

    return make_workspace(
        root,
        store=ReceiptStore(root / ".counterfoil" / "receipts.jsonl"),
        confirm_proposal=confirm,
        allow_writes=True,
    )


def test_a_write_of_the_bytes_already_there_asks_nothing_and_leaves_no_receipt(
    tmp_path: Path,
) -> None:
    (tmp_path / ".counterfoil").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n")
    asked: list[ToolProposal] = []
    workspace = asking_workspace(tmp_path, asked)
    workspace.execute(ToolAction("read_file", {"path": "app.py"}))

    step = workspace.execute_step(
        ToolAction("write_file", {"path": "app.py", "content": "x = 1\n"})
    )

    assert step.observation == "error: nothing to write: app.py already holds exactly these bytes"
    assert asked == []
    assert workspace.receipt_store.receipts() == ()
    assert compute_verdict(workspace.effect_outcomes).files_changed == ()


def test_an_edit_that_replaces_text_by_itself_is_nothing_to_write(tmp_path: Path) -> None:
    (tmp_path / ".counterfoil").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n")
    asked: list[ToolProposal] = []
    workspace = asking_workspace(tmp_path, asked)
    workspace.execute(ToolAction("read_file", {"path": "app.py"}))

    observation = workspace.execute(
        ToolAction("edit_file", {"path": "app.py", "old": "x = 1", "new": "x = 1"})
    )

    assert observation.startswith("error: nothing to write: app.py")
    assert asked == []


def test_an_edit_whose_old_and_new_are_the_same_is_nothing_to_write_even_unread(
    tmp_path: Path,
) -> None:
    """Whatever the file holds, such an edit changes nothing: said at once, with no read asked
    for first (the 1.5B sent one before it had read the file)."""
    (tmp_path / ".counterfoil").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n")
    asked: list[ToolProposal] = []
    workspace = asking_workspace(tmp_path, asked)

    step = workspace.execute_step(
        ToolAction("edit_file", {"path": "app.py", "old": "def f():", "new": "def f():"})
    )

    assert step.observation == ("error: nothing to write: app.py: old and new are the same text")
    assert step.detail is None and asked == []

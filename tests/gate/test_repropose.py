"""A file the person changed while its proposal waited: the same edit proposed again on their
bytes (when the model's `old` text still occurs once), never a silent No."""

from __future__ import annotations

from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import ToolAction, ToolPolicy, Workspace
from counterfoil.gate.approval import Approval
from counterfoil.proposals import EditProposal, ToolProposal


def workspace_answering(
    root: Path, *answers: Approval, change: str | None = None
) -> tuple[Workspace, list[EditProposal]]:
    shown: list[EditProposal] = []
    pending = list(answers)

    def confirm(proposal: ToolProposal) -> Approval:
        assert isinstance(proposal, EditProposal)
        shown.append(proposal)
        if change is not None and len(shown) == 1:
            (root / "app.py").write_text(change)  # the person's save while it waits
        return pending.pop(0)

    policy = ToolPolicy(root=root, allow_writes=True)
    workspace = make_workspace(policy, confirm_proposal=confirm)
    workspace.read_file("app.py")
    return workspace, shown


EDIT = ToolAction("edit_file", {"path": "app.py", "old": "value * 1", "new": "value * 2"})


def test_the_edit_is_proposed_again_on_the_persons_bytes_and_written_there(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f(value):\n    return value * 1\n")
    mine = "# my note\ndef f(value):\n    return value * 1\n"
    workspace, shown = workspace_answering(
        tmp_path, Approval(False, repropose=True), Approval(True), change=mine
    )

    result = workspace.execute(EDIT)

    assert result.startswith("edited app.py (the person changed the file while your proposal")
    assert shown[1].base_text == mine
    assert (tmp_path / "app.py").read_text() == mine.replace("value * 1", "value * 2")


def test_an_edit_whose_old_text_is_gone_is_a_no_that_says_why(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def f(value):\n    return value * 1\n")
    workspace, shown = workspace_answering(
        tmp_path, Approval(False, repropose=True), change="def f(value):\n    return 0\n"
    )

    result = workspace.execute(EDIT)

    assert result == (
        "error: operator denied the tool action: the file changed and the edit no longer applies"
    )
    assert len(shown) == 1
    assert (tmp_path / "app.py").read_text() == "def f(value):\n    return 0\n"


def test_a_plain_no_is_not_proposed_again(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("value * 1\n")
    workspace, shown = workspace_answering(tmp_path, Approval(False))
    assert workspace.execute(EDIT).startswith("error: operator denied")
    assert len(shown) == 1

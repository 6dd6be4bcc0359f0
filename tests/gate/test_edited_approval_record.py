"""After an edited approval the model is counted as having read the file only when its diff
showed everything; a cut diff says so, and the file must be read before it is changed again."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace
from counterfoil.gate.approval import Approval
from counterfoil.gate.edited_approval import MAX_DIFF_CHARS


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def edited_by_the_person(tmp_path: Path, text: str) -> tuple[Workspace, str]:
    policy = ToolPolicy(tmp_path, allow_writes=True)
    store = ReceiptStore(tmp_path / ".counterfoil" / "receipts.jsonl")
    (tmp_path / ".counterfoil").mkdir()
    workspace = make_workspace(
        policy, store=store, confirm_proposal=lambda _: Approval(True, text=text)
    )
    proposal = ToolAction("write_file", {"path": "notes.md", "content": "short\n"})
    return workspace, workspace.execute(proposal)


def edit_again(workspace: Workspace) -> str:
    return workspace.execute(
        ToolAction("edit_file", {"path": "notes.md", "old": "line 1\n", "new": "one\n"})
    )


def test_a_cut_diff_says_so_and_the_file_must_be_read_before_it_changes_again(
    tmp_path: Path,
) -> None:
    text = "".join(f"line {number}\n" for number in range(1000))
    workspace, observation = edited_by_the_person(tmp_path, text)

    assert f"only the first {MAX_DIFF_CHARS:,} characters of the diff are shown" in observation
    assert "notes.md" not in workspace.read_digests
    assert edit_again(workspace) == "error: read the existing file before changing it"


def test_a_whole_diff_counts_as_having_seen_the_written_text(tmp_path: Path) -> None:
    workspace, observation = edited_by_the_person(tmp_path, "line 1\nline 2\n")

    assert "what was written differs from your proposal:\n" in observation
    assert edit_again(workspace) != "error: read the existing file before changing it"

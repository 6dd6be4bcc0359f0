"""With the setting `editForm` at `diff`, a model edits part of a file by one hunk of a unified
diff against the file as read (`patch_file`). The hunk is placed only where its kept and
removed lines are consecutive whole lines of the file, exactly once; the person is asked, and
the receipt keeps, the exact `edit_file` it makes. A hunk that names lines the file does not
hold, or names them more than once, is refused and nothing is asked or written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ToolAction
from counterfoil.gate.approval import Approval
from counterfoil.gate.patches import patch_edit
from counterfoil.receipts import ReceiptStore
from counterfoil.step_facts import BreaksFile
from counterfoil.tools import enabled_tools

MODULE = 'ANSWER = 41\n\nraise RuntimeError("never import this")\n'


def patch(path: str, diff: str) -> ToolAction:
    return ToolAction("patch_file", {"path": path, "diff": diff})


class Asked:
    """The person: keeps each proposal shown and approves it."""

    def __init__(self) -> None:
        self.shown: list[Any] = []

    def __call__(self, proposal: Any) -> Approval:
        self.shown.append(proposal)
        return Approval(True)


def diff_workspace(root: Path, asked: Asked, store: ReceiptStore | None = None) -> Any:
    return make_workspace(
        root, confirm_proposal=asked, allow_writes=True, edit_form="diff", store=store
    )


def test_a_run_offers_one_edit_form_the_setting_chooses() -> None:
    assert "edit_file" in enabled_tools(True, ())
    assert "patch_file" not in enabled_tools(True, ())
    assert "patch_file" in enabled_tools(True, (), edit_form="diff")
    assert "edit_file" not in enabled_tools(True, (), edit_form="diff")
    assert not {"edit_file", "patch_file"} & enabled_tools(False, (), edit_form="diff")


def test_a_hunk_is_asked_and_receipted_as_the_exact_edit_it_makes(tmp_path: Path) -> None:
    (tmp_path / "answer.py").write_text(MODULE)
    asked, store = Asked(), ReceiptStore()
    workspace = diff_workspace(tmp_path, asked, store)
    workspace.execute_step(ToolAction("read_file", {"path": "answer.py"}))

    step = workspace.execute_step(patch("answer.py", "@@ -1 +1 @@\n-ANSWER = 41\n+ANSWER = 42\n"))

    assert not step.is_error, step.observation
    assert (tmp_path / "answer.py").read_text() == MODULE.replace("41", "42")
    [proposal] = asked.shown
    assert proposal.action == ToolAction(
        "edit_file", {"path": "answer.py", "old": "ANSWER = 41", "new": "ANSWER = 42"}
    )
    [receipt] = store.receipts()
    assert (receipt.tool, receipt.arguments["old"]) == ("edit_file", "ANSWER = 41")


@pytest.mark.parametrize(
    ("text", "diff", "after"),
    [
        # kept lines around the change place it; a blank kept line may drop its space
        ("a\nb\nc\n", " a\n-b\n+B\n c\n", "a\nB\nc\n"),
        ("a\n\nb\n", " a\n\n-b\n+B\n", "a\n\nB\n"),
        # a removed line goes with its newline, at the start, middle and end of the file
        ("a\nb\nc\n", "-a\n", "b\nc\n"),
        ("a\nb\nc\n", "-b\n", "a\nc\n"),
        ("a\nb\nc", "-c\n", "a\nb"),
        # the lines a unified diff starts with, as git writes them, are not read
        (
            "a\nb\n",
            "diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-b\n+B\n",
            "a\nB\n",
        ),
        # new lines before, between and after the lines named
        ("a\nb\n", "+x\n a\n+y\n b\n+z\n", "x\na\ny\nb\nz\n"),
        # lines whose text also ends another line: the edit is widened until it is unique
        ("x = 1\ny = x = 1\n", "-x = 1\n+x = 2\n", "x = 2\ny = x = 1\n"),
        ("y = x = 1\nx = 1", "-x = 1\n+x = 2\n", "y = x = 1\nx = 2"),
    ],
)
def test_a_hunk_makes_the_change_its_lines_say(text: str, diff: str, after: str) -> None:
    old, new = patch_edit(text, diff)

    assert text.count(old) == 1
    assert text.replace(old, new, 1) == after


@pytest.mark.parametrize(
    ("diff", "refusal"),
    [
        ("-ANSWER = 40\n+ANSWER = 42\n", "are not consecutive lines of answer.py"),
        ("-answer.py\n+answer.py\n", "are not consecutive lines of answer.py"),
        (" ANSWER = 41\n", "no line after '-' or '+'"),
        ("+ANSWER = 42\n", "names no line of the file"),
        ("ANSWER = 42\n", "line 1 of diff starts with neither"),
    ],
)
def test_a_hunk_that_does_not_fit_the_file_is_refused_and_nothing_is_asked(
    tmp_path: Path, diff: str, refusal: str
) -> None:
    (tmp_path / "answer.py").write_text(MODULE)
    asked = Asked()
    workspace = diff_workspace(tmp_path, asked)
    workspace.execute_step(ToolAction("read_file", {"path": "answer.py"}))

    step = workspace.execute_step(patch("answer.py", diff))

    assert step.is_error and refusal in step.observation, step.observation
    assert asked.shown == []
    assert (tmp_path / "answer.py").read_text() == MODULE


def test_lines_the_file_holds_twice_are_refused_with_where_they_are(tmp_path: Path) -> None:
    (tmp_path / "twice.py").write_text("x = 1\ny = 2\nx = 1\n")
    asked = Asked()
    workspace = diff_workspace(tmp_path, asked)
    workspace.execute_step(ToolAction("read_file", {"path": "twice.py"}))

    step = workspace.execute_step(patch("twice.py", "-x = 1\n+x = 3\n"))

    assert "occur 2 times in twice.py (from lines 1, 3)" in step.observation
    assert asked.shown == []


def test_a_hunk_that_breaks_the_module_is_refused_in_the_name_the_model_used(
    tmp_path: Path,
) -> None:
    (tmp_path / "answer.py").write_text(MODULE)
    asked = Asked()
    workspace = diff_workspace(tmp_path, asked)
    workspace.execute_step(ToolAction("read_file", {"path": "answer.py"}))

    step = workspace.execute_step(patch("answer.py", "-ANSWER = 41\n+ANSWER = (42\n"))

    assert isinstance(step.detail, BreaksFile), step.observation
    told = step.detail.sentence()
    assert "your patch_file would leave answer.py not valid Python" in told
    assert "(patch_file changes only the lines you name)" in told
    assert asked.shown == []


def test_a_hunk_of_a_file_not_read_is_refused(tmp_path: Path) -> None:
    (tmp_path / "answer.py").write_text(MODULE)
    asked = Asked()
    workspace = diff_workspace(tmp_path, asked)

    step = workspace.execute_step(patch("answer.py", "-ANSWER = 41\n+ANSWER = 42\n"))

    assert step.is_error and "read" in step.observation
    assert asked.shown == []

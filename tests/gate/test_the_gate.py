"""The gate checks every call whole: the tool enabled, its arguments, reads without approval."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.gate.gate_doubles import (
    HELLO,
    Operator,
    edit,
    run,
    writable,
    write,
)
from tests.support.workspaces import make_workspace

from counterfoil import (
    FinalAction,
    ToolAction,
)


@pytest.mark.parametrize(
    "action",
    [write("notes.md", "x\n"), edit("app.py", "1", "2"), run(HELLO)],
    ids=["write_file", "edit_file", "run_command"],
)
def test_disabled_tool_is_not_enabled(demo_project: Path, action: ToolAction) -> None:
    operator = Operator()
    workspace = make_workspace(demo_project, confirm_tool=operator)
    assert workspace.execute(action) == f"error: tool is not enabled: {action.tool}"
    assert operator.asked == []
    assert len(workspace.receipt_store) == 0
    assert not (demo_project / "notes.md").exists()


def test_unknown_tool_is_not_enabled(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    action = ToolAction("delete_file", {"path": "app.py"})
    assert workspace.execute(action) == "error: tool is not enabled: delete_file"


def test_gate_checks_the_arguments(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    result = workspace.execute(ToolAction("write_file", {"path": "a.md", "text": "x"}))
    assert result.startswith("error: ")
    assert operator.asked == []
    assert not (tmp_path / "a.md").exists()


def test_gate_returns_an_error_for_a_final_answer(tmp_path: Path) -> None:
    assert make_workspace(tmp_path).execute(FinalAction("done")).startswith("error: ")


def test_reads_need_no_approval_and_leave_no_receipt(demo_project: Path) -> None:
    operator = Operator(answer=False)
    workspace = writable(demo_project, operator)
    assert "def double" in workspace.execute(ToolAction("read_file", {"path": "app.py"}))
    assert "file app.py" in workspace.execute(ToolAction("list_files", {"path": "."}))
    assert operator.asked == []
    assert workspace.receipt_store.receipts() == ()
    assert workspace.modified_files == ()

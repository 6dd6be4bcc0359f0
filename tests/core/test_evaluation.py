"""Day 7's evaluation on Counterfoil's own log and file rules, beyond the course's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, write

from counterfoil import (
    AgentRun,
    ApprovalDecision,
    EvaluationCase,
    FileExpectation,
    ReceiptExpectation,
    ToolAction,
    Workspace,
    evaluate_run,
)


def _written(tmp_path: Path) -> tuple[Workspace, AgentRun, EvaluationCase]:
    workspace = approving_workspace(tmp_path)
    assert workspace.execute(write("app.py", "answer = 2\n")) == "wrote app.py"
    run = AgentRun(True, "completed", "done", (), workspace.modified_files)
    case = EvaluationCase(
        "done",
        files=(FileExpectation("app.py", "answer = 2\n"),),
        receipts=(ReceiptExpectation("call-1", "write_file", "ok", "wrote", ("app.py",)),),
    )
    return workspace, run, case


def test_a_receipt_line_edited_in_the_middle_of_the_log_fails_its_check(tmp_path: Path) -> None:
    workspace, run, case = _written(tmp_path)
    log = log_path(tmp_path)
    log.write_text(log.read_text().replace('"tool":"write_file"', '"tool":"edit_file"', 1))

    report = evaluate_run(run, workspace, workspace.receipt_store, case)

    assert [check.name for check in report.checks if not check.passed] == ["receipt:call-1"]
    assert report.checks[-1].detail.startswith("receipt evidence unavailable")


def test_a_file_expectation_does_not_follow_a_symlink(tmp_path: Path) -> None:
    workspace, run, case = _written(tmp_path)
    (tmp_path / "elsewhere.py").write_text("answer = 2\n")
    os.replace(tmp_path / "app.py", tmp_path / "moved.py")
    os.symlink(tmp_path / "elsewhere.py", tmp_path / "app.py")

    report = evaluate_run(run, workspace, workspace.receipt_store, case)

    assert [check.name for check in report.checks if not check.passed] == ["file:app.py"]


def test_evaluation_leaves_the_receipt_log_unchanged(tmp_path: Path) -> None:
    workspace, run, case = _written(tmp_path)
    before = log_path(tmp_path).read_bytes()

    assert evaluate_run(run, workspace, workspace.receipt_store, case).passed
    assert log_path(tmp_path).read_bytes() == before


def test_a_structured_denial_reaches_the_model_with_its_reason(tmp_path: Path) -> None:
    workspace = approving_workspace(
        tmp_path, confirm_proposal=lambda _: ApprovalDecision(False, "not this file")
    )

    result = workspace.execute(ToolAction("write_file", {"path": "a.py", "content": "x = 1"}))

    assert result == "error: operator denied the tool action: not this file"
    assert not (tmp_path / "a.py").exists()


def test_a_denial_without_a_reason_is_refused() -> None:
    with pytest.raises(ValueError, match="nonblank operator reason"):
        ApprovalDecision(False)

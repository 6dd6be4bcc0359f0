"""Revert from a receipt: an ordinary effect that puts the bytes before an effect back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import FIXTURES
from tests.support.terminal import run_cli
from tests.support.workspaces import make_workspace

LOG = ".counterfoil/receipts.jsonl"
TEST = "python -m pytest tests/test_math.py -q"


def receipts(project: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (project / LOG).read_text().splitlines()]


@pytest.fixture
def fixed_project(demo_project: Path) -> Path:
    """The demo after an approved edit of app.py (call-1) and a passing test (call-2)."""
    status, _ = run_cli(
        [
            "agent",
            "fix app.py",
            "--root",
            str(demo_project),
            "--allow-writes",
            "--allow-command",
            TEST,
            "--model",
            f"scripted:{FIXTURES / 'responses' / 'fix-app.jsonl'}",
        ],
        "y\ny\n",
    )
    assert status == 0
    return demo_project


def test_an_approved_revert_restores_the_bytes_before_and_records_what_it_reverts(
    fixed_project: Path, demo_project: Path
) -> None:
    original = (FIXTURES / "demo-project" / "app.py").read_bytes()

    status, output = run_cli(["revert", "call-1", "--root", str(fixed_project)], "y\n")

    assert status == 0
    assert "call-3: revert of call-1 app.py\n" in output
    assert "-    return value * 2\n+    return value * 1\n" in output
    assert (fixed_project / "app.py").read_bytes() == original
    last = receipts(fixed_project)[-1]
    assert last["tool"] == "revert" and last["reverts"] == "call-1"
    first = receipts(fixed_project)[0]
    assert last["base_sha256"] == first["result_sha256"]
    assert last["result_sha256"] == first["base_sha256"]
    assert run_cli(["receipts", "verify", str(fixed_project / LOG)])[0] == 0


def test_a_rejected_revert_writes_nothing_and_records_nothing(fixed_project: Path) -> None:
    before = (fixed_project / "app.py").read_bytes()
    count = len(receipts(fixed_project))

    status, output = run_cli(["revert", "call-1", "--root", str(fixed_project)], "n\n")

    assert status == 1
    assert output.endswith("denied\nerror: operator denied the tool action\n")
    assert (fixed_project / "app.py").read_bytes() == before
    assert len(receipts(fixed_project)) == count


def test_a_file_changed_since_the_receipt_is_not_reverted(fixed_project: Path) -> None:
    (fixed_project / "app.py").write_text("a person's own edit\n")

    status, output = run_cli(["revert", "call-1", "--root", str(fixed_project)], "y\n")

    assert status == 1
    assert output == "error: file changed since the receipt\n"
    assert (fixed_project / "app.py").read_text() == "a person's own edit\n"


def test_a_file_changed_while_the_revert_waits_for_approval_is_not_written(
    fixed_project: Path,
) -> None:
    from counterfoil import ReceiptStore
    from counterfoil.errors import AgentError

    def edit_then_approve(proposal: object) -> bool:
        (fixed_project / "app.py").write_text("changed during approval\n")
        return True

    workspace = make_workspace(
        fixed_project, store=ReceiptStore(fixed_project / LOG), confirm_proposal=edit_then_approve
    )
    with pytest.raises(AgentError, match="file changed since the receipt"):
        workspace.revert("call-1")

    assert (fixed_project / "app.py").read_text() == "changed during approval\n"
    assert [outcome.state for outcome in workspace.effect_outcomes] == ["failed"]


def test_reverting_a_created_file_removes_it(demo_project: Path) -> None:
    model = FIXTURES / "responses" / "greeting.jsonl"
    run_cli(
        [
            "agent",
            "greet",
            "--root",
            str(demo_project),
            "--allow-writes",
            "--allow-command",
            "python validate.py",
            "--model",
            f"scripted:{model}",
        ],
        "y\ny\ny\n",
    )
    notes = next(r for r in receipts(demo_project) if r["tool"] == "write_file")
    assert notes["base_sha256"] is None

    status, output = run_cli(
        ["revert", str(notes["tool_call_id"]), "--root", str(demo_project)], "y\n"
    )

    assert status == 0
    assert "-> removes the file\n" in output and "+++ /dev/null" in output
    assert not (demo_project / "NOTES.md").exists()
    assert receipts(demo_project)[-1]["result_sha256"] is None


def test_a_command_that_changed_no_file_has_nothing_to_revert_and_nobody_is_asked(
    fixed_project: Path,
) -> None:
    status, output = run_cli(["revert", "call-2", "--root", str(fixed_project)], "y\n")

    assert status == 1
    assert output == "error: nothing of call-2 can be reverted (it changed no file)\n"


def test_an_unknown_call_id_is_an_error(fixed_project: Path) -> None:
    assert run_cli(["revert", "call-99", "--root", str(fixed_project)]) == (
        1,
        "error: no receipt for call-99\n",
    )


def test_revert_without_a_receipt_log_is_a_setup_error(demo_project: Path) -> None:
    status, output = run_cli(["revert", "call-1", "--root", str(demo_project)])

    assert status == 2
    assert output.startswith("error: no receipt log at ")


def test_a_receipt_from_an_older_log_cannot_be_reverted() -> None:
    from counterfoil.errors import AgentError
    from counterfoil.gate.revert import plan_revert
    from counterfoil.receipts import EffectReceipt

    course = EffectReceipt(
        "call-1", "edit_file", {"path": "app.py"}, "ok", "edited app.py", ("app.py",)
    )

    with pytest.raises(AgentError, match="does not record the bytes before it"):
        plan_revert(course, "call-1", lambda digest: None)

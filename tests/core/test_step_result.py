"""Each step's record beside its observation: the call, what became of its effect (in the
verdict's four words), its receipt, and what it wrote or ran, read by no one from the text."""

from __future__ import annotations

from pathlib import Path

from tests.support.receipts import HELLO, approving_workspace, run_hello, write
from tests.support.recording_model import RecordingModel

from counterfoil import AgentEvent, ToolAction, ToolPolicy, Workspace, run_agent
from counterfoil.cli.approvals import format_event
from counterfoil.steps import StepResult


def test_an_approved_write_names_its_call_receipt_and_digest(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)

    step = workspace.execute_step(write("notes.txt", "hi\n"))

    (receipt,) = workspace.receipt_store.receipts()
    assert step.observation == "wrote notes.txt"
    assert (step.call_id, step.state) == (receipt.tool_call_id, "approved")
    assert step.receipt_id == receipt.receipt_id
    assert step.effect is not None and step.effect.path == "notes.txt"
    assert step.effect.sha256 == step.result_sha256 == receipt.evidence["result_sha256"]
    assert workspace.last_step == step


def test_a_command_names_its_exit_status_and_stored_output(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)

    step = workspace.execute_step(run_hello())

    (receipt,) = workspace.receipt_store.receipts()
    assert step.state == "approved" and step.effect is not None
    assert (step.effect.argv, step.effect.exit_status, step.effect.timed_out) == (HELLO, 0, False)
    assert step.output_sha256 == receipt.evidence["output_sha256"]


def test_a_no_is_rejected_with_no_receipt(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path, answer=False)

    step = workspace.execute_step(write("notes.txt", "hi\n"))

    assert step.observation.startswith("error: operator denied")
    assert step.state == "rejected" and step.call_id is not None
    assert step.receipt_id is None and workspace.receipt_store.receipts() == ()


def test_a_refused_read_is_refused_and_a_read_that_ran_has_no_state(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    workspace = Workspace(ToolPolicy(tmp_path))

    refused = workspace.execute_step(ToolAction("read_file", {"path": "../outside"}))
    read = workspace.execute_step(ToolAction("read_file", {"path": "app.py"}))

    assert refused.state == "refused" and refused.call_id is None
    assert read == StepResult("x = 1\n")


def test_the_loop_puts_each_steps_record_on_its_event(tmp_path: Path) -> None:
    model = RecordingModel('{"tool":"write_file","path":"a.txt","content":"a"}', '{"final":"ok"}')
    workspace = approving_workspace(tmp_path)

    run = run_agent("write a.txt", model, workspace)

    edit, final = run.events
    assert edit.step_result is not None and edit.step_result.state == "approved"
    assert edit.step_result.observation == edit.result
    assert final.step_result is None


def test_an_execute_that_returns_other_text_carries_no_record(tmp_path: Path) -> None:
    class Stubbed(Workspace):
        def execute(self, action: object, tool_call_id: str | None = None) -> str:
            super().execute(action, tool_call_id)
            return "stubbed"

    (tmp_path / "app.py").write_text("x = 1\n")
    model = RecordingModel('{"tool":"read_file","path":"app.py"}', '{"final":"ok"}')

    run = run_agent("read", model, Stubbed(ToolPolicy(tmp_path)))

    assert run.events[0].result == "stubbed" and run.events[0].step_result is None


def test_the_terminal_shows_each_calls_state_exit_status_and_receipt(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)
    action = run_hello()
    step = workspace.execute_step(action)

    shown = format_event(AgentEvent(1, "{}", action, step.observation, step))

    assert shown.endswith(
        f"\neffect: {step.call_id} approved, exit status 0, receipt {step.receipt_id}\n"
    )

"""Each step's record beside its observation: the call, what became of its effect (in the
verdict's four words), its receipt, and what it wrote or ran, read by no one from the text."""

from __future__ import annotations

from pathlib import Path

from tests.support.receipts import HELLO, PYTHON, approving_workspace, run_hello, write
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import (
    AgentEvent,
    ArtifactStore,
    BoundedEvidenceWorkspace,
    ToolAction,
    ToolPolicy,
    Workspace,
    run_agent,
)
from counterfoil.cli.approvals import format_event
from counterfoil.evals.runner import _metrics
from counterfoil.steps import StepResult


def test_an_approved_write_names_its_call_receipt_and_digest(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)

    step = workspace.execute_step(write("notes.txt", "hi\n"))

    (receipt,) = workspace.receipt_store.receipts()
    assert step.observation == "wrote notes.txt"
    assert (step.call_id, step.state) == (receipt.tool_call_id, "approved")
    assert step.receipt_id == receipt.receipt_id
    assert step.effect is not None and step.effect.path == "notes.txt"
    assert step.effect.sha256 == step.result_sha256 == receipt.evidence.result_sha256


def test_a_command_names_its_exit_status_and_stored_output(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)

    step = workspace.execute_step(run_hello())

    (receipt,) = workspace.receipt_store.receipts()
    assert step.state == "approved" and step.effect is not None
    assert (step.effect.argv, step.effect.exit_status, step.effect.timed_out) == (HELLO, 0, False)
    assert step.output_sha256 == receipt.evidence.output_sha256


def test_a_no_is_rejected_with_no_receipt(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path, answer=False)

    step = workspace.execute_step(write("notes.txt", "hi\n"))

    assert step.observation.startswith("error: operator denied")
    assert step.state == "rejected" and step.call_id is not None
    assert step.receipt_id is None and workspace.receipt_store.receipts() == ()


def test_a_refused_read_is_refused_and_a_read_that_ran_has_no_state(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    workspace = make_workspace(tmp_path)

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


def test_a_workspace_that_redefines_execute_is_taken_at_its_word(tmp_path: Path) -> None:
    class Stubbed(Workspace):
        def execute(self, action: object, tool_call_id: str | None = None) -> str:
            super().execute(action, tool_call_id)
            return "stubbed"

    (tmp_path / "app.py").write_text("x = 1\n")
    model = RecordingModel('{"tool":"read_file","path":"app.py"}', '{"final":"ok"}')

    run = run_agent("read", model, Stubbed(ToolPolicy(tmp_path)))

    assert run.events[0].result == "stubbed"
    assert run.events[0].step_result == StepResult("stubbed")


def test_a_refusal_carries_the_gates_sentence_apart_from_the_observation(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path)

    step = workspace.execute_step(ToolAction("read_file", {"path": "../outside"}))

    assert step.is_error and step.error == "path must be relative and stay in the workspace"
    assert step.observation == f"error: {step.error}"


def test_a_command_that_exits_non_zero_is_no_error_of_the_gate(tmp_path: Path) -> None:
    failing = (PYTHON, "-c", "raise SystemExit(3)")
    workspace = make_workspace(tmp_path, answer=True, allowed_commands=(failing,))

    step = workspace.execute_step(ToolAction("run_command", {"argv": list(failing)}))

    assert step.state == "approved" and not step.is_error


def test_the_loop_hands_each_step_its_record_not_the_last_one_kept(tmp_path: Path) -> None:
    model = RecordingModel(
        '{"tool":"write_file","path":"a.txt","content":"a"}',
        '{"tool":"read_file","path":"../outside"}',
        '{"final":"ok"}',
    )
    workspace = approving_workspace(tmp_path)

    run = run_agent("write a.txt", model, workspace)

    wrote, refused, _ = run.events
    assert wrote.step_result is not None and wrote.step_result.state == "approved"
    assert refused.step_result is not None and refused.step_result.error is not None
    assert not hasattr(workspace, "last_step")


def test_the_terminal_shows_each_calls_state_exit_status_and_receipt(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)
    action = run_hello()
    step = workspace.execute_step(action)

    shown = format_event(AgentEvent(1, "{}", action, step.observation, step))

    assert shown.endswith(
        f"\neffect: {step.call_id} approved, exit status 0, receipt {step.receipt_id}\n"
    )


def test_the_terminal_shows_what_the_model_was_told_beside_the_observation() -> None:
    """The record keeps the observation; the person also sees the notes the model read after
    it, or the fuller sentence it read instead (a file read for it with a refusal)."""
    noted = AgentEvent(1, "{}", None, "wrote a.md", told="wrote a.md\n\nThe task: t")
    fuller = AgentEvent(2, "{}", None, "error: read it first", told="error: read: a.md\nx\n")
    plain = AgentEvent(3, "{}", None, "wrote a.md", told=None)

    assert format_event(noted) == (
        "observation:\nwrote a.md\nthe model was also told:\nThe task: t\n"
    )
    assert format_event(fuller) == (
        "observation:\nerror: read it first\nthe model was told:\nerror: read: a.md\nx\n"
    )
    assert format_event(plain) == "observation:\nwrote a.md\n"


def test_a_file_whose_text_starts_with_error_is_read_not_refused(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "build.log").write_text("error: disk full\n" + "x" * 2_000)
    (tmp_path / "artifacts").mkdir()
    workspace = make_workspace(tmp_path / "root")
    bounded = BoundedEvidenceWorkspace(workspace, ArtifactStore(tmp_path / "artifacts"))

    step = bounded.execute_step(ToolAction("read_file", {"path": "build.log"}))

    assert not step.is_error
    assert step.observation.startswith("Tool result externalized:\n")


def test_the_evals_count_only_the_gates_refusals_as_tool_errors(tmp_path: Path) -> None:
    (tmp_path / "build.log").write_text("error: disk full\n")
    model = RecordingModel(
        '{"tool":"read_file","path":"build.log"}',
        '{"tool":"read_file","path":"missing.log"}',
        '{"final":"ok"}',
    )

    run = run_agent("read", model, make_workspace(tmp_path))

    assert _metrics(run, (), 0.0).tool_errors == 1

from counterfoil.actions import FinalAction, ToolAction
from counterfoil.loop import AgentEvent
from counterfoil.lsp.outcomes import step_outcome
from counterfoil.lsp.protocol import event_dict

EDIT = ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"})
RUN = ToolAction("run_command", {"argv": ["python", "validate.py"]})


def test_a_denied_proposal_is_denied_whatever_the_model_says_next() -> None:
    assert step_outcome(EDIT, "error: operator denied the tool action") == "denied"


def test_a_gate_refusal_is_refused_and_a_nonzero_exit_is_failed() -> None:
    assert step_outcome(EDIT, "error: file changed since it was read") == "refused"
    assert step_outcome(RUN, "status: 1\noutput:\nFAILED\n") == "failed"
    assert step_outcome(RUN, "status: timeout\noutput:\n") == "failed"


def test_a_write_or_a_passing_command_is_ok() -> None:
    assert step_outcome(EDIT, "edited app.py") == "ok"
    assert step_outcome(RUN, "status: 0\noutput:\n") == "ok"


def test_a_final_answer_or_unparsed_response_has_no_outcome() -> None:
    assert step_outcome(FinalAction("done"), None) is None
    assert step_outcome(None, "error: invalid JSON") is None


def test_every_run_event_carries_its_outcome() -> None:
    event = AgentEvent(step=2, response="{}", action=EDIT, result="edited app.py")
    assert event_dict(event)["outcome"] == "ok"

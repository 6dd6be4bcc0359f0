"""The scripted model's side of the checkpoint protocol: its state is its next response."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import (
    AgentError,
    ModelCheckpoint,
    resume_agent,
    resume_with_steering,
    run_to_checkpoint,
)
from counterfoil.models.scripted import ScriptedModel

SCRIPT = ('{"tool":"list_files","path":"."}', '{"final":"listed"}')


def test_scripted_model_saves_its_next_response_and_no_cached_tokens() -> None:
    model = ScriptedModel(SCRIPT)
    model([])

    state = model.save_checkpoint([{"role": "system", "content": "s"}])

    assert state == ModelCheckpoint(1, 1, (), (0,))


def test_a_fresh_scripted_model_resumes_at_the_saved_response(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    checkpoint = run_to_checkpoint("list", ScriptedModel(SCRIPT), workspace)
    fresh = ScriptedModel(SCRIPT)

    run = resume_agent(checkpoint, fresh, workspace)

    assert (run.completed, run.final, fresh.remaining) == (True, "listed", 0)


def test_a_scripted_model_refuses_a_position_beyond_its_script() -> None:
    with pytest.raises(ValueError, match="resumes at response 4"):
        ScriptedModel(SCRIPT).restore_checkpoint(ModelCheckpoint(0, 3, (), (0,)))


def test_a_checkpoint_at_the_last_step_is_still_taken(tmp_path: Path) -> None:
    from counterfoil import AgentLimits

    workspace = make_workspace(tmp_path)
    checkpoint = run_to_checkpoint(
        "list", ScriptedModel(SCRIPT), workspace, limits=AgentLimits(max_steps=1)
    )

    assert checkpoint.messages[-1][0] == "user"
    assert checkpoint.model.response_index == 1


def test_an_invalid_action_is_not_counted_as_a_tool_call(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    model = ScriptedModel(("not json", *SCRIPT))

    checkpoint = run_to_checkpoint("list", model, workspace)

    assert checkpoint.model.response_index == 2
    assert checkpoint.messages[-2] == ("assistant", SCRIPT[0])


def test_steering_a_scripted_model_keeps_its_position(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    checkpoint = run_to_checkpoint("list", ScriptedModel(SCRIPT), workspace)

    run = resume_with_steering(checkpoint, "be brief", ScriptedModel(SCRIPT), workspace)

    assert run.final == "listed"
    with pytest.raises(AgentError, match="checkpoint restore"):
        resume_with_steering(checkpoint, "be brief", lambda _messages: "{}", workspace)

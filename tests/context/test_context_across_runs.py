"""The context window holds across a conversation's runs: a follow-up elides earlier turns'
observations by the same rule, and the elision strategy is a limit of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, Workspace, build_system_prompt, run_agent
from counterfoil.actions import ToolAction
from counterfoil.context.budget import ContextWindow, Observation, estimate_tokens
from counterfoil.context.compaction import COMPACTED_PREFIX
from counterfoil.steps import StepResult

FIRST_GOAL = "read mod_00.py and mod_01.py"
FOLLOW_UP = "now read the other modules"
BUDGET = 1_400  # estimated tokens: two modules fit whole, four do not


def module_text(index: int) -> str:
    return "".join(
        f"def f_{index}_{n:02}(x):\n    return x + {n}  # {'.' * 40}\n" for n in range(20)
    )


def project(root: Path) -> Workspace:
    for index in range(5):
        (root / f"mod_{index:02}.py").write_text(module_text(index), encoding="utf-8")
    return make_workspace(root, answer=True, allow_writes=True)


def reads(*indexes: int) -> list[dict[str, object]]:
    return [{"tool": "read_file", "path": f"mod_{index:02}.py"} for index in indexes]


def first_run(
    workspace: Workspace, observations: list[Observation] | None
) -> tuple[list[dict[str, str]], object]:
    """Two reads, then the step limit: the conversation ends with a tool result."""
    messages: list[dict[str, str]] = []
    run = run_agent(
        FIRST_GOAL,
        RecordingModel(*reads(0, 1)),
        workspace,
        AgentLimits(max_steps=2, max_context_tokens=BUDGET),
        messages=messages,
        observations=observations,
    )
    assert run.reason == "step_limit"
    assert len(messages[-1]["content"]) > 1_000  # nothing elided yet
    return messages, run


def test_a_follow_up_elides_the_earlier_runs_observations(tmp_path: Path) -> None:
    workspace = project(tmp_path)
    observations: list[Observation] = []
    messages, _ = first_run(workspace, observations)
    model = RecordingModel(*reads(2, 3), {"final": "read them all"})

    second = run_agent(
        FOLLOW_UP,
        model,
        workspace,
        AgentLimits(max_steps=3, max_context_tokens=BUDGET),
        messages=messages,
        observations=observations,
    )

    assert second.reason == "completed"
    last = model.calls[-1]
    assert all(estimate_tokens(call) <= BUDGET for call in model.calls)
    assert last[0] == {"role": "system", "content": build_system_prompt(workspace)}
    assert last[1] == {"role": "user", "content": FIRST_GOAL}
    assert last[3]["content"] == "Tool result:\n[read_file mod_00.py: elided]"
    # The follow-up joined the earlier run's last tool result; its elision keeps the goal.
    assert last[5]["content"] == f"Tool result:\n[read_file mod_01.py: elided]\n\n{FOLLOW_UP}"
    assert last[-1]["content"] == "Tool result:\n" + module_text(3)  # the last observations
    assert last[-3]["content"] == "Tool result:\n" + module_text(2)


def test_elision_in_a_follow_up_leaves_every_runs_events_whole(tmp_path: Path) -> None:
    workspace = project(tmp_path)
    observations: list[Observation] = []
    messages, first = first_run(workspace, observations)
    second = run_agent(
        FOLLOW_UP,
        RecordingModel(*reads(2, 3), {"final": "read them all"}),
        workspace,
        AgentLimits(max_steps=3, max_context_tokens=BUDGET),
        messages=messages,
        observations=observations,
    )
    assert [event.result for event in first.events] == [module_text(0), module_text(1)]
    assert [event.result for event in second.events[:2]] == [module_text(2), module_text(3)]
    assert not any("elided]" in (event.result or "") for event in second.events)


def test_without_the_earlier_record_a_follow_up_runs_out_of_context(tmp_path: Path) -> None:
    """What the kept record buys: the earlier observations could not otherwise be elided."""
    workspace = project(tmp_path)
    messages, _ = first_run(workspace, None)
    second = run_agent(
        FOLLOW_UP,
        RecordingModel(*reads(2, 3), {"final": "read them all"}),
        workspace,
        AgentLimits(max_steps=3, max_context_tokens=BUDGET),
        messages=messages,
    )
    assert second.reason == "context_limit"


def test_the_record_notes_every_observation_without_a_token_budget(tmp_path: Path) -> None:
    """A run under the character limit still records, so a later run with a window elides."""
    workspace = project(tmp_path)
    messages: list[dict[str, str]] = []
    observations: list[Observation] = []
    run_agent(
        FIRST_GOAL,
        RecordingModel(*reads(0, 1), {"final": "done"}),
        workspace,
        AgentLimits(max_steps=3),
        messages=messages,
        observations=observations,
    )
    assert [o.index for o in observations] == [3, 5]
    assert observations[0].summary == "Tool result:\n[read_file mod_00.py: elided]"


def test_an_effects_outcome_from_an_earlier_run_is_never_elided(tmp_path: Path) -> None:
    workspace = project(tmp_path)
    observations: list[Observation] = []
    messages: list[dict[str, str]] = []
    run_agent(
        FIRST_GOAL,
        RecordingModel(
            *reads(0),
            {"tool": "write_file", "path": "notes.txt", "content": "notes\n"},
            {"final": "wrote"},
        ),
        workspace,
        AgentLimits(max_steps=3, max_context_tokens=BUDGET * 2),
        messages=messages,
        observations=observations,
    )
    written = next(m for m in messages if m["content"].startswith("Tool result:\nwrote"))
    model = RecordingModel(*reads(1, 2, 3), {"final": "done"})
    run_agent(
        FOLLOW_UP,
        model,
        workspace,
        AgentLimits(max_steps=4, max_context_tokens=BUDGET),
        messages=messages,
        observations=observations,
    )
    # Whole, or (its told notes making it longer than its record) as its receipt's record.
    assert written in model.calls[-1] or any(
        m["content"].startswith(COMPACTED_PREFIX)
        and '"result_preview":"wrote notes.txt"' in m["content"]
        for m in model.calls[-1]
    )
    assert "Tool result:\n[read_file mod_00.py: elided]" in [m["content"] for m in messages]


def test_eliding_every_turn_rewrites_the_prompt_more_often_than_in_steps(
    tmp_path: Path,
) -> None:
    """The gap between `elide_above` and `elide_down_to` is what keeps the prefix stable."""

    def rewrites(elide_down_to: float) -> int:
        root = tmp_path / str(elide_down_to)
        root.mkdir()
        workspace = project(root)
        for index in range(5, 16):
            (root / f"mod_{index:02}.py").write_text(module_text(index), encoding="utf-8")
        model = RecordingModel(*reads(*range(16)), {"final": "done"})
        limits = AgentLimits(max_steps=17, max_context_tokens=3_000, elide_down_to=elide_down_to)
        assert run_agent("read every module", model, workspace, limits).reason == "completed"
        return sum(1 for a, b in zip(model.calls, model.calls[1:]) if b[: len(a)] != a)

    in_steps, every_turn = rewrites(0.5), rewrites(0.85)
    assert in_steps < every_turn
    assert every_turn >= 8


@pytest.mark.parametrize(
    "above, down_to", [(0.5, 0.85), (0.0, 0.0), (1.5, 0.5), (0.85, 0.0), (0.85, -0.1)]
)
def test_elision_fractions_must_step_down_within_the_window(above: float, down_to: float) -> None:
    with pytest.raises(ValueError, match="elide_down_to"):
        AgentLimits(elide_above=above, elide_down_to=down_to)


def test_text_joined_after_an_observation_survives_its_elision() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "g"}]
    window = ContextWindow(messages, max_tokens=200, keep_recent=0)
    result = "x" * 2_000
    messages += [
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "Tool result:\n" + result},
    ]
    window.observed(ToolAction("read_file", {"path": "a.py"}), StepResult(result))
    messages[-1] = {"role": "user", "content": messages[-1]["content"] + "\n\nnext goal"}
    assert window.fits()
    assert messages[-1]["content"] == "Tool result:\n[read_file a.py: elided]\n\nnext goal"

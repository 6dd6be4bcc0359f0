"""Context that lasts: old observations are elided from the model's view, under a token budget
or the course's character one."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, ToolPolicy, Workspace, build_system_prompt, run_agent
from counterfoil.actions import ToolAction
from counterfoil.context.budget import ContextWindow, elided_summary, estimate_tokens
from counterfoil.context.compaction import COMPACTED_PREFIX
from counterfoil.step_facts import LinesShown, SearchHits
from counterfoil.steps import StepResult, refusal

GOAL = "rename helper_07 to helper_seven everywhere and check the project still imports"
MODULES = 12
CHECK = (sys.executable, "-c", "print('imports ok')")


def fixture_project(root: Path) -> Path:
    """Twelve modules of about 3 KB each: a few reads fill the course's 48,000 characters."""
    for index in range(MODULES):
        body = "".join(
            f"def helper_{index:02}_{n:02}(value):\n    return value + {n}  # {'pad ' * 8}\n\n"
            for n in range(30)
        )
        (root / f"mod_{index:02}.py").write_text(body, encoding="utf-8")
    return root


def forty_steps() -> list[dict[str, object]]:
    """39 tool calls (reads, ranged reads, searches, an edit, a command) and a final answer."""
    script: list[dict[str, object]] = [{"tool": "list_files"}]
    for index in range(MODULES):
        script.append({"tool": "read_file", "path": f"mod_{index:02}.py"})
        script.append(
            {"tool": "read_file", "path": f"mod_{index:02}.py", "start_line": 1, "end_line": 40}
        )
    script.append({"tool": "search_files", "pattern": "helper_07_0[0-9]"})
    script.append(
        {
            "tool": "edit_file",
            "path": "mod_07.py",
            "old": "def helper_07_00(",
            "new": "def helper_seven_00(",
        }
    )
    script.append({"tool": "run_command", "argv": list(CHECK)})
    while len(script) < 39:
        script.append(
            {
                "tool": "read_file",
                "path": f"mod_{len(script) % MODULES:02}.py",
                "start_line": len(script),
                "end_line": len(script) + 30,
            }
        )
    script.append({"final": "renamed helper_07_00 and the project imports"})
    return script


def project_workspace(root: Path) -> Workspace:
    policy = ToolPolicy(root, allow_writes=True, allow_search=True, allowed_commands=(CHECK,))
    return make_workspace(policy, answer=True)


def observations(messages: list[dict[str, str]]) -> list[str]:
    return [m["content"] for m in messages[2:] if m["role"] == "user"]


@pytest.fixture
def long_run(tmp_path: Path) -> tuple[RecordingModel, object, Workspace]:
    workspace = project_workspace(fixture_project(tmp_path))
    model = RecordingModel(*forty_steps())
    run = run_agent(GOAL, model, workspace, AgentLimits(max_steps=40, max_context_tokens=8_000))
    return model, run, workspace


def test_the_forty_step_run_completes_under_the_character_limit(tmp_path: Path) -> None:
    workspace = project_workspace(fixture_project(tmp_path))
    model = RecordingModel(*forty_steps())
    run = run_agent(GOAL, model, workspace, AgentLimits(max_steps=40))
    assert run.reason == "completed"
    assert all(sum(len(m["content"]) for m in call) <= 48_000 for call in model.calls)


def test_the_forty_step_run_completes_within_a_token_budget(long_run: tuple[Any, ...]) -> None:
    model, run, _ = long_run
    assert run.reason == "completed"
    assert len(run.events) == 40
    assert all(estimate_tokens(call) <= 8_000 for call in model.calls)


def test_elision_is_in_the_models_messages_and_not_in_the_events(long_run: tuple[Any, ...]) -> None:
    model, run, _ = long_run
    last_view = observations(model.calls[-1])
    assert "Tool result:\n[read_file mod_00.py: elided]" in last_view
    assert "Tool result:\n[read_file mod_00.py, lines 1–40: elided]" in last_view
    assert "Tool result:\n[list_files .: elided]" in last_view
    assert not any("elided]" in (event.result or "") for event in run.events)
    assert run.events[1].result.startswith("def helper_00_00(value):")


def test_the_system_prompt_goal_effects_and_latest_observations_are_never_elided(
    long_run: tuple[Any, ...],
) -> None:
    model, run, workspace = long_run
    last = model.calls[-1]
    # As first sent: the overview in it is of the root before the run's edits.
    assert last[0] == model.calls[0][0]
    assert last[0]["content"].startswith(build_system_prompt(workspace).split("\n", 1)[0])
    assert last[1] == {"role": "user", "content": GOAL}
    view = observations(last)
    # An effect stays whole or becomes its receipt's record (the outcome kept), never a line.
    edit = next(item for item in view if "mod_07.py" in item and "edit" in item)
    assert edit.startswith(("Tool result:\nedited mod_07.py", COMPACTED_PREFIX)), edit
    assert '"result_preview":"edited mod_07.py"' in edit or edit.startswith("Tool result:\nedited")
    command = next(
        e for e in run.events if isinstance(e.action, ToolAction) and e.action.tool == "run_command"
    )
    assert "imports ok" in command.result
    assert "Tool result:\n" + (command.told or command.result) in view
    assert view[-2:] == [
        "Tool result:\n" + (event.told or event.result) for event in run.events[-3:-1]
    ]


def test_elision_happens_in_few_large_steps(long_run: tuple[Any, ...]) -> None:
    """Between elisions the view only grows at its end, so a prompt cache stays valid."""
    model, _, _ = long_run
    rewrites = sum(
        1 for before, after in zip(model.calls, model.calls[1:]) if after[: len(before)] != before
    )
    assert 1 <= rewrites <= 5


def test_a_models_own_token_count_is_used(tmp_path: Path) -> None:
    workspace = project_workspace(fixture_project(tmp_path))
    counted: list[int] = []

    class CountingModel(RecordingModel):
        """A `Model`: its counters, its tool narrowing, its window, its token count."""

        stats: tuple[object, ...] = ()
        context_tokens = None

        def configure_tools(
            self,
            available_tools: object,
            allowed_commands: object,
            mcp_tools: object = None,
            view: object = None,
        ) -> None:
            pass

        def count_tokens(self, messages: list[dict[str, str]]) -> int:
            counted.append(len(messages))
            return 10 * len(messages)  # a budget of 60 allows five messages

    model = CountingModel(*forty_steps()[:4], {"final": "done"})
    run = run_agent(GOAL, model, workspace, AgentLimits(max_steps=8, max_context_tokens=60))
    assert counted
    assert run.reason == "context_limit"


def test_a_budget_that_elision_cannot_meet_ends_the_run(tmp_path: Path) -> None:
    workspace = project_workspace(fixture_project(tmp_path))
    run = run_agent(
        GOAL,
        RecordingModel(*forty_steps()),
        workspace,
        AgentLimits(max_steps=40, max_context_tokens=1_500),
    )
    assert run.reason == "context_limit"


@pytest.mark.parametrize(
    "action, step, summary",
    [
        (ToolAction("read_file", {"path": "a.py"}), StepResult("text"), "[read_file a.py: elided]"),
        (
            ToolAction("read_file", {"path": "a.py", "start_line": 3}),
            StepResult("[lines 3–9 of 9]\nx", lines=LinesShown(3, 9, 9)),
            "[read_file a.py, lines 3–9: elided]",
        ),
        (
            ToolAction("search_files", {"pattern": "def"}),
            StepResult("a:1: def\nb:2: def", search=SearchHits(2, complete=True)),
            "[search_files 'def' in .: 2 lines elided]",
        ),
        (
            ToolAction("list_files", {"path": "src"}),
            StepResult("file src/a.py"),
            "[list_files src: elided]",
        ),
    ],
)
def test_an_elided_observation_is_one_line_naming_what_was_seen(
    action: ToolAction, step: StepResult, summary: str
) -> None:
    assert elided_summary(action, step) == summary


def test_the_lines_an_elided_read_names_come_from_its_record_not_its_text() -> None:
    """A file whose own first line reads `[lines …]` is not taken for a range."""
    action = ToolAction("read_file", {"path": "notes.md"})

    assert (
        elided_summary(action, StepResult("[lines 1–2 of 5]\n")) == "[read_file notes.md: elided]"
    )


def test_max_context_tokens_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        AgentLimits(max_context_tokens=0)
    assert AgentLimits().max_context_tokens is None


def test_errors_and_effects_are_not_elidable() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "g"}]
    window = ContextWindow(messages, max_tokens=10)
    for action, step in [
        (ToolAction("read_file", {"path": "a.py"}), refusal("x" * 400)),
        (ToolAction("run_command", {"argv": ["make"]}), StepResult("exit 0\n" + "y" * 400)),
        (None, None),
    ]:
        result = "error: response is not valid JSON" if step is None else step.observation
        messages += [
            {"role": "assistant", "content": "{}"},
            {"role": "user", "content": "Tool result:\n" + result},
        ]
        window.observed(action, step)
    before = copy.deepcopy(messages)
    assert window.fits() is False
    assert messages == before

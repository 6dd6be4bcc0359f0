"""The system prompt states the rules and shows only the tools the policy enables."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import ToolPolicy, build_system_prompt, parse_action

VALIDATION = ("python", "-m", "pytest", "tests/test_math.py", "-q")
LINT = ("python", "validate.py")


def prompt_for(root: Path, **policy: object) -> str:
    return build_system_prompt(make_workspace(root, **policy))  # type: ignore[arg-type]


def json_lines(prompt: str) -> list[object]:
    values = []
    for line in prompt.splitlines():
        try:
            values.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return values


def test_read_only_prompt_shows_only_the_read_tools(demo_project: Path) -> None:
    prompt = prompt_for(demo_project)
    assert '"tool":"list_files"' in prompt
    assert '"tool":"read_file"' in prompt
    assert '"tool":"write_file"' not in prompt
    assert '"tool":"edit_file"' not in prompt
    assert '"tool":"run_command"' not in prompt


def test_writes_add_the_write_and_edit_examples(demo_project: Path) -> None:
    prompt = prompt_for(demo_project, allow_writes=True)
    assert '"tool":"write_file"' in prompt
    assert '"tool":"edit_file"' in prompt
    assert '"tool":"run_command"' not in prompt


def test_allowed_commands_add_the_run_command_example(demo_project: Path) -> None:
    prompt = prompt_for(demo_project, allowed_commands=(VALIDATION,))
    assert '"tool":"run_command"' in prompt
    assert '"tool":"write_file"' not in prompt


def test_each_example_is_one_parseable_compact_tool_call(demo_project: Path) -> None:
    prompt = prompt_for(demo_project, allow_writes=True, allowed_commands=(VALIDATION,))
    examples = [value for value in json_lines(prompt) if isinstance(value, dict)]
    assert sorted(example["tool"] for example in examples if "tool" in example) == [
        "edit_file",
        "list_files",
        "read_file",
        "run_command",
        "write_file",
    ]
    for example in examples:
        if "tool" in example:
            assert json.dumps(example, separators=(",", ":")) in prompt


def test_read_before_change_rule_appears_only_with_writes(demo_project: Path) -> None:
    read_only = prompt_for(demo_project).lower()
    writable = prompt_for(demo_project, allow_writes=True).lower()
    assert "before you change" in writable
    assert "before you change" not in read_only


def test_allowed_commands_are_listed_as_json_arrays(demo_project: Path) -> None:
    prompt = prompt_for(demo_project, allowed_commands=(VALIDATION, LINT))
    arrays = [value for value in json_lines(prompt) if isinstance(value, list)]
    assert list(VALIDATION) in arrays
    assert list(LINT) in arrays


def test_no_command_arrays_without_allowed_commands(demo_project: Path) -> None:
    prompt = prompt_for(demo_project, allow_writes=True)
    assert [value for value in json_lines(prompt) if isinstance(value, list)] == []


def test_prompt_says_it_is_a_coding_agent_that_inspects_before_editing(
    demo_project: Path,
) -> None:
    prompt = prompt_for(demo_project).lower()
    assert "coding agent" in prompt
    assert "inspect" in prompt


def test_prompt_asks_for_exactly_one_json_object_and_no_markdown(demo_project: Path) -> None:
    prompt = prompt_for(demo_project).lower()
    assert "exactly one json object" in prompt
    assert "no markdown" in prompt


def test_prompt_shows_how_to_finish_with_a_final_object(demo_project: Path) -> None:
    prompt = prompt_for(demo_project)
    assert '{"final":' in prompt


def test_prompt_says_paths_are_relative(demo_project: Path) -> None:
    assert "relative" in prompt_for(demo_project).lower()


def test_prompt_says_never_invent_file_contents(demo_project: Path) -> None:
    assert "never invent" in prompt_for(demo_project).lower()


def test_no_example_in_the_prompt_passes_as_an_action(demo_project: Path) -> None:
    """A small model copies the examples verbatim: each must be refused, never done."""
    policy = ToolPolicy(
        demo_project, allow_writes=True, allowed_commands=(VALIDATION,), allow_search=True
    )
    workspace = make_workspace(policy, answer=True)
    for path in sorted(demo_project.iterdir()):
        if path.is_file():
            workspace.read_file(path.name)
    prompt = build_system_prompt(workspace)
    examples = [
        value for value in json_lines(prompt) if isinstance(value, dict) and "tool" in value
    ]
    before = {path: path.read_bytes() for path in demo_project.rglob("*") if path.is_file()}

    steps = [workspace.execute_step(parse_action(json.dumps(example))) for example in examples]

    assert len(steps) == len(workspace.available_tools)
    assert all(step.is_error and step.effect is None for step in steps)
    assert {path: path.read_bytes() for path in demo_project.rglob("*") if path.is_file()} == before


def test_with_writes_the_prompt_gives_the_order_of_work(demo_project: Path) -> None:
    from counterfoil.context.prompt import WORK_ORDER, WORK_ORDER_WITH_COMMAND

    assert WORK_ORDER in prompt_for(demo_project, allow_writes=True)
    assert WORK_ORDER_WITH_COMMAND in prompt_for(
        demo_project, allow_writes=True, allowed_commands=(VALIDATION,)
    )
    assert "Work in this order" not in prompt_for(demo_project)

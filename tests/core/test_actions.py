"""The model's reply is exactly one JSON object, a final answer or one flat tool call."""

from __future__ import annotations

import dataclasses

import pytest

from counterfoil import AgentError, FinalAction, ToolAction, parse_action

ALL_TOOLS = frozenset({"list_files", "read_file", "write_file", "edit_file", "run_command"})


def test_agent_error_is_a_value_error() -> None:
    assert issubclass(AgentError, ValueError)


def test_final_answer_parses_to_final_action() -> None:
    assert parse_action('{"final":"done"}') == FinalAction("done")


def test_final_answer_with_another_key_is_refused() -> None:
    with pytest.raises(AgentError):
        parse_action('{"final":"done","tool":"read_file"}')


def test_final_answer_must_be_a_string() -> None:
    with pytest.raises(AgentError):
        parse_action('{"final":["done"]}')


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ('{"tool":"list_files"}', ToolAction("list_files", {})),
        ('{"tool":"list_files","path":"src"}', ToolAction("list_files", {"path": "src"})),
        ('{"tool":"read_file","path":"a.py"}', ToolAction("read_file", {"path": "a.py"})),
        (
            '{"tool":"write_file","path":"a.py","content":"x = 1\\n"}',
            ToolAction("write_file", {"path": "a.py", "content": "x = 1\n"}),
        ),
        (
            '{"tool":"edit_file","path":"a.py","old":"1","new":"2"}',
            ToolAction("edit_file", {"path": "a.py", "old": "1", "new": "2"}),
        ),
        (
            '{"tool":"run_command","argv":["python","-m","pytest"]}',
            ToolAction("run_command", {"argv": ["python", "-m", "pytest"]}),
        ),
    ],
)
def test_each_tool_parses_with_flat_arguments(response: str, expected: ToolAction) -> None:
    assert parse_action(response) == expected
    assert parse_action(response, ALL_TOOLS) == expected


@pytest.mark.parametrize(
    "response",
    [
        '{"tool":"read_file"}',
        '{"tool":"write_file","path":"a.py"}',
        '{"tool":"write_file","content":"x"}',
        '{"tool":"edit_file","path":"a.py","old":"1"}',
        '{"tool":"edit_file","path":"a.py","new":"2"}',
        '{"tool":"run_command"}',
    ],
)
def test_missing_argument_is_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


@pytest.mark.parametrize(
    "response",
    [
        '{"tool":"list_files","path":".","recursive":true}',
        '{"tool":"read_file","path":"a.py","encoding":"utf-8"}',
        '{"tool":"write_file","path":"a.py","content":"x","mode":"append"}',
        '{"tool":"edit_file","path":"a.py","old":"1","new":"2","count":1}',
        '{"tool":"run_command","argv":["ls"],"cwd":"."}',
        '{"tool":"read_file","arguments":{"path":"a.py"}}',
    ],
)
def test_extra_argument_is_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


@pytest.mark.parametrize(
    "response",
    [
        '{"tool":"list_files","path":1}',
        '{"tool":"read_file","path":null}',
        '{"tool":"read_file","path":["a.py"]}',
        '{"tool":"write_file","path":"a.py","content":{"text":"x"}}',
        '{"tool":"edit_file","path":"a.py","old":1,"new":"2"}',
        '{"tool":"edit_file","path":"a.py","old":"1","new":false}',
        '{"tool":"run_command","argv":"python -m pytest"}',
        '{"tool":"run_command","argv":["python",1]}',
    ],
)
def test_wrongly_typed_argument_is_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


def test_unknown_tool_is_refused() -> None:
    with pytest.raises(AgentError, match="delete_file"):
        parse_action('{"tool":"delete_file","path":"a.py"}')


def test_tool_name_must_be_a_string() -> None:
    with pytest.raises(AgentError):
        parse_action('{"tool":["read_file"],"path":"a.py"}')


def test_object_without_tool_or_final_is_refused() -> None:
    with pytest.raises(AgentError):
        parse_action('{"path":"a.py"}')


def test_known_tool_missing_from_available_tools_is_not_enabled() -> None:
    with pytest.raises(AgentError, match="not enabled"):
        parse_action(
            '{"tool":"write_file","path":"a.py","content":"x"}',
            frozenset({"list_files", "read_file"}),
        )


def test_available_tools_none_allows_every_known_tool() -> None:
    action = parse_action('{"tool":"run_command","argv":["ls"]}', None)
    assert action == ToolAction("run_command", {"argv": ["ls"]})


def test_surrounding_whitespace_is_allowed() -> None:
    response = '\n  \t{"tool":"read_file","path":"a.py"}\n\n'
    assert parse_action(response) == ToolAction("read_file", {"path": "a.py"})


def test_whitespace_inside_the_object_is_allowed() -> None:
    response = '{ "tool" : "read_file" ,\n  "path" : "a.py" }'
    assert parse_action(response) == ToolAction("read_file", {"path": "a.py"})


@pytest.mark.parametrize(
    "response",
    [
        '```json\n{"tool":"read_file","path":"a.py"}\n```',
        '```\n{"final":"done"}\n```',
    ],
)
def test_markdown_fences_are_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


@pytest.mark.parametrize(
    "response",
    [
        '{"final":"a"}{"final":"b"}',
        '{"tool":"read_file","path":"a.py"}\n{"final":"done"}',
        '{"final":"done"} and some prose',
        'Sure! {"final":"done"}',
    ],
)
def test_anything_besides_one_object_is_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


@pytest.mark.parametrize("response", ['["final","done"]', '"done"', "42", "null", "true"])
def test_non_object_json_is_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


@pytest.mark.parametrize("response", ["", "   \n", "I will read the file.", '{"final":'])
def test_empty_or_invalid_json_is_refused(response: str) -> None:
    with pytest.raises(AgentError):
        parse_action(response)


def test_tool_action_is_frozen() -> None:
    action = ToolAction("read_file", {"path": "a.py"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.tool = "write_file"  # type: ignore[misc]


def test_final_action_is_frozen() -> None:
    action = FinalAction("done")
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.final = "changed"  # type: ignore[misc]


def test_prose_around_one_valid_action_is_refused_with_the_expected_form() -> None:
    reply = 'Sure! I will read the file.\n{"tool":"read_file","path":"app.py"}\nDone.'
    with pytest.raises(AgentError) as refused:
        parse_action(reply)
    message = str(refused.value)
    assert message.startswith("response has text around its JSON object; reply with exactly")
    assert '{"tool":"<name>", <its arguments>} or {"final":"<answer>"}' in message
    assert "\n" not in message


def test_text_that_is_not_json_is_refused_with_the_expected_form_in_one_line() -> None:
    with pytest.raises(AgentError, match=r"^response is not valid JSON: Expecting value; reply"):
        parse_action("I think the answer is 4")

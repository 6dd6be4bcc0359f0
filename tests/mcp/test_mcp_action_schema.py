"""The action schema with the approved MCP tools: an `mcp_call` can only name an offered tool,
with arguments under the input schema the person approved."""

from __future__ import annotations

from counterfoil.tools import action_schema

READ = {
    "server": "files",
    "name": "read",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}


def mcp_choices(schema: dict[str, object]) -> list[dict[str, object]]:
    return [
        choice
        for choice in schema["anyOf"]
        if choice["properties"].get("tool") == {"const": "mcp_call"}
    ]


def test_each_approved_tool_is_one_choice_with_its_own_input_schema() -> None:
    [choice] = mcp_choices(action_schema({"mcp_call"}, mcp_tools=[READ]))

    assert choice["properties"] == {
        "tool": {"const": "mcp_call"},
        "server": {"const": "files"},
        "name": {"const": "read"},
        "arguments": READ["input_schema"],
    }


def test_without_the_definitions_a_call_takes_any_object_as_arguments() -> None:
    [choice] = mcp_choices(action_schema({"mcp_call"}))

    assert choice["properties"]["arguments"] == {"type": "object"}


def test_no_approved_tool_leaves_no_mcp_choice() -> None:
    assert mcp_choices(action_schema({"mcp_call"}, mcp_tools=[])) == []

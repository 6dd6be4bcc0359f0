"""The tool table is the only one: a row added to it reaches every reader without other change."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import AgentError, ToolAction, build_system_prompt, tools
from counterfoil.actions import check_arguments, parse_action
from counterfoil.lsp.session import Session
from counterfoil.protocol import wire
from counterfoil.tools import Argument, Tool, action_schema

from .conftest import RecordingChannel

COUNT_LINES = Tool(
    "count_lines",
    (Argument("path", "string"), Argument("pattern", "string", required=False)),
    effect=False,
    requires="nothing",
    example={"path": "app.py", "pattern": "def "},
)


@pytest.fixture
def with_count_lines(monkeypatch: pytest.MonkeyPatch) -> Tool:
    monkeypatch.setattr(tools, "TOOLS", (*tools.TOOLS, COUNT_LINES))
    return COUNT_LINES


def test_a_tool_added_to_the_table_reaches_prompt_schema_checking_and_status(
    with_count_lines: Tool, tmp_path: Path
) -> None:
    workspace = make_workspace(tmp_path)
    assert "count_lines" in workspace.available_tools

    prompt = build_system_prompt(workspace)
    assert '{"tool":"count_lines","path":"app.py","pattern":"def "}' in prompt

    [branch] = [
        choice
        for choice in action_schema(workspace.available_tools)["anyOf"]
        if choice["properties"].get("tool") == {"const": "count_lines"}
    ]
    assert list(branch["properties"]) == ["tool", "path", "pattern"]
    assert branch["required"] == ["tool", "path"]

    action = parse_action('{"tool":"count_lines","path":"a.py"}', workspace.available_tools)
    assert action == ToolAction("count_lines", {"path": "a.py"})
    with pytest.raises(AgentError, match="missing fields for count_lines: path"):
        check_arguments("count_lines", {"pattern": "x"})
    with pytest.raises(AgentError, match="count_lines argument pattern must be a string"):
        parse_action('{"tool":"count_lines","path":"a.py","pattern":1}')

    session = Session(RecordingChannel())
    session.root = tmp_path.resolve()
    status = wire(session.queries.status())
    assert "count_lines" in status["availableTools"]
    assert status["tools"][-1] == {
        "name": "count_lines",
        "effect": False,
        "enabled": True,
        "arguments": [
            {"name": "path", "type": "string", "required": True},
            {"name": "pattern", "type": "string", "required": False},
        ],
        "example": {"tool": "count_lines", "path": "app.py", "pattern": "def "},
    }


def test_argv_is_checked_the_same_for_models_and_schema(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="^argv must contain non-empty strings without NUL$"):
        parse_action('{"tool":"run_command","argv":[]}')
    schema = action_schema({"run_command"})
    [command] = [c for c in schema["anyOf"] if "argv" in c["properties"]]
    assert command["properties"]["argv"]["minItems"] == 1

"""The action schema with the approved MCP tools: an `mcp_call` can only name an offered tool,
with arguments under the input schema the person approved; the loop tells the model the tools,
and a model server is asked for that schema."""

from __future__ import annotations

from pathlib import Path

from tests.support.mcp_servers import Person, stdio_server, toolbox
from tests.support.workspaces import make_workspace

from counterfoil import run_agent
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.models.scripted import ScriptedModel
from counterfoil.models.server.remote import RemoteGenerate
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


class ToolAwareModel(ScriptedModel):
    """A scripted model that records the MCP tools `run_agent` tells it of."""

    def __init__(self, responses: list[str]) -> None:
        super().__init__(responses)
        self.mcp_tools: list[object] = []

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: object,
        mcp_tools: object = None,
        view: object = None,
    ) -> None:
        self.mcp_tools.append(mcp_tools)


def test_run_agent_tells_the_model_the_approved_mcp_tools(tmp_path: Path) -> None:
    box = toolbox((stdio_server(tmp_path),), tmp_path, tmp_path / "config", Person())
    workspace = make_workspace(tmp_path, setup=WorkspaceSetup(mcp_toolbox=box))
    model = ToolAwareModel(['{"final":"done"}'])
    try:
        run_agent("look", model, workspace)
    finally:
        box.close()

    [listed] = model.mcp_tools
    assert {"server": "files", "name": "read"}.items() <= listed[0].items()


def test_a_model_server_is_asked_for_the_approved_tools_under_their_schemas() -> None:
    generate = RemoteGenerate("http://127.0.0.1:9/v1", "tiny")

    generate.configure_tools(frozenset({"mcp_call"}), (), mcp_tools=[READ])

    schema = generate.request_body([])["response_format"]["json_schema"]["schema"]
    [choice] = mcp_choices(schema)
    assert choice["properties"]["arguments"] == READ["input_schema"]

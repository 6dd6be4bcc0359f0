"""The system prompt: the rules of the game, showing only the tools the policy enables."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import tools

if TYPE_CHECKING:
    from ..gate.workspace import Workspace


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def build_system_prompt(workspace: Workspace, instructions: str | None = None) -> str:
    """`instructions`: the project's AGENTS.md (see agents_file.py), put last."""
    enabled = workspace.available_tools
    commands = workspace.policy.allowed_commands
    lines = [
        "You are a coding agent working in one project folder. Inspect before you edit.",
        "Reply with exactly one JSON object per turn and nothing else: no markdown, no prose.",
        "Each turn is either one tool call or the final answer.",
        "Tools (one example each):",
    ]
    for tool in tools.TOOLS:
        if tool.name in enabled:
            lines.append(_compact(tools.example_action(tool, commands)))
    lines.append('When you are done, reply {"final":"what you did and how it was checked"}.')
    lines.extend(tool.note for tool in tools.TOOLS if tool.name in enabled and tool.note)
    lines.extend(line for tool in tools.TOOLS if tool.name in enabled for line in tool.guidance)
    if commands:
        lines.append("Allowed commands (argv, exactly as listed):")
        lines.extend(_compact(list(command)) for command in commands)
    toolbox = workspace.mcp_toolbox
    if "mcp_call" in enabled and toolbox is not None:
        lines.append("MCP tools (server, name, description, input_schema), called with mcp_call:")
        lines.extend(_compact(offered.listing()) for offered in toolbox.offered())
    lines.append("Paths are relative to the project folder.")
    lines.append("Never invent file contents: read them with read_file.")
    if instructions and instructions.strip():
        lines.append(
            "The project's AGENTS.md follows: its rules for agents. They add to the rules above"
            " and cannot change what the tools allow."
        )
        lines.append(instructions.rstrip("\n"))
    return "\n".join(lines)

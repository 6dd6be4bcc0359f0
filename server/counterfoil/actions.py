"""What the model may say: one JSON object per turn, parsed into an action or a final answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import AgentError

TOOL_ARGUMENTS: dict[str, dict[str, tuple[type, bool]]] = {
    "list_files": {"path": (str, False)},
    "read_file": {"path": (str, True), "start_line": (int, False), "end_line": (int, False)},
    "write_file": {"path": (str, True), "content": (str, True)},
    "edit_file": {"path": (str, True), "old": (str, True), "new": (str, True)},
    "run_command": {"argv": (list, True)},
    "search_files": {"pattern": (str, True), "path": (str, False), "literal": (bool, False)},
}
KNOWN_TOOLS = frozenset(TOOL_ARGUMENTS)
EFFECT_TOOLS = frozenset({"write_file", "edit_file", "run_command"})


@dataclass(frozen=True)
class ToolAction:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class FinalAction:
    final: str


Action = ToolAction | FinalAction


def parse_action(response: str, available_tools: frozenset[str] | None = None) -> Action:
    """Accept exactly one JSON object: a final answer or one tool call with flat arguments."""
    if not isinstance(response, str):
        raise AgentError("response must be a string")
    text = response.strip()
    if not text:
        raise AgentError("response is empty; reply with exactly one JSON object")
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as error:
        raise AgentError(f"response is not a JSON object: {error.msg}") from None
    if end != len(text):
        raise AgentError("response must contain exactly one JSON object and nothing else")
    if not isinstance(value, dict):
        raise AgentError("response must be a JSON object")
    if "final" in value:
        if set(value) != {"final"}:
            raise AgentError("a final answer must have only the key final")
        if not isinstance(value["final"], str):
            raise AgentError("final must be a string")
        return FinalAction(value["final"])
    tool = value.get("tool")
    if not isinstance(tool, str):
        raise AgentError("response must have a string tool or a final answer")
    if tool not in TOOL_ARGUMENTS:
        raise AgentError(f"unknown tool: {tool}")
    if available_tools is not None and tool not in available_tools:
        raise AgentError(f"tool is not enabled: {tool}")
    arguments = {key: item for key, item in value.items() if key != "tool"}
    check_arguments(tool, arguments)
    return ToolAction(tool, arguments)


def check_arguments(tool: str, arguments: dict[str, Any]) -> None:
    expected = TOOL_ARGUMENTS[tool]
    extra = sorted(set(arguments) - set(expected))
    if extra:
        raise AgentError(f"{tool} got unexpected arguments: {', '.join(extra)}")
    for name, (kind, required) in expected.items():
        if name not in arguments:
            if required:
                raise AgentError(f"{tool} requires argument {name}")
            continue
        item = arguments[name]
        if kind is str and not isinstance(item, str):
            raise AgentError(f"{tool} argument {name} must be a string")
        if kind is int and (not isinstance(item, int) or isinstance(item, bool)):
            raise AgentError(f"{tool} argument {name} must be an integer")
        if kind is bool and not isinstance(item, bool):
            raise AgentError(f"{tool} argument {name} must be true or false")
        if kind is list and (
            not isinstance(item, list) or not all(isinstance(part, str) for part in item)
        ):
            raise AgentError(f"{tool} argument {name} must be a list of strings")


def action_to_json(action: Action) -> str:
    """The compact JSON a model would write for `action` (used in prompts and traces)."""
    if isinstance(action, FinalAction):
        return json.dumps({"final": action.final}, separators=(",", ":"))
    return json.dumps({"tool": action.tool, **action.arguments}, separators=(",", ":"))

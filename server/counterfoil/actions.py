"""What the model may say: one JSON object per turn, parsed into an action or a final answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import tools
from .errors import AgentError, ToolNotEnabled

# The tiny-llm course's names, derived from the tool table (`counterfoil.tools.TOOLS`), which is what the
# functions below read.
TOOL_ARGUMENTS: dict[str, dict[str, tuple[type, bool]]] = tools.tool_arguments()
KNOWN_TOOLS = frozenset(tools.tool_names())
EFFECT_TOOLS = frozenset(tool.name for tool in tools.TOOLS if tool.effect)


# Restated with every refusal of a reply's form, so a model that wrapped its action in prose
# or fences is told in one line what to send instead.
EXPECTED_FORM = (
    'reply with exactly one JSON object and nothing else: {"tool":"<name>", <its arguments>} '
    'or {"final":"<answer>"}'
)


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
        raise AgentError(f"response is empty; {EXPECTED_FORM}")
    try:
        value, end = _STRICT.raw_decode(text)
    except NotJson as error:
        raise AgentError(str(error)) from None
    except json.JSONDecodeError as error:
        if _object_inside(text):
            raise AgentError(f"response has text around its JSON object; {EXPECTED_FORM}") from None
        raise AgentError(f"response is not valid JSON: {error.msg}; {EXPECTED_FORM}") from None
    except (RecursionError, ValueError):
        raise AgentError(
            f"response is not valid JSON: too deeply nested or too large; {EXPECTED_FORM}"
        ) from None
    if end != len(text):
        raise AgentError(f"response must contain exactly one JSON object; {EXPECTED_FORM}")
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
    if tools.tool_named(tool) is None:
        raise AgentError(f"unknown tool: {tool}")
    if available_tools is not None and tool not in available_tools:
        raise ToolNotEnabled(tool)
    arguments = {key: item for key, item in value.items() if key != "tool"}
    check_arguments(tool, arguments)
    return ToolAction(tool, arguments)


class NotJson(ValueError):
    """A constant Python's reader takes but JSON has not (NaN, Infinity, -Infinity)."""


def _refuse_constant(name: str) -> Any:
    raise NotJson(
        f"response is not valid JSON: {name} is not a JSON number (a server would get null, "
        "not what was shown); write a number or a string"
    )


# Strict JSON: what the person is shown and the receipt keeps is what a tool gets.
_STRICT = json.JSONDecoder(parse_constant=_refuse_constant)


def _object_inside(text: str) -> bool:
    """Whether prose (or a fence) surrounds a JSON object: such a reply is refused, never
    guessed at, since the person approves exactly what the model said."""
    start = text.find("{")
    if start <= 0:
        return False
    try:
        json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return False
    return True


def check_arguments(tool: str, arguments: dict[str, Any]) -> None:
    """Raise AgentError naming the first missing, extra or mistyped argument of `tool`."""
    row = tools.tool_named(tool)
    if row is None:
        raise AgentError(f"unknown tool: {tool}")
    problem = tools.argument_problem(row, arguments)
    if problem is not None:
        raise AgentError(problem)


def action_to_json(action: Action) -> str:
    """The compact JSON a model would write for `action` (used in prompts and traces)."""
    if isinstance(action, FinalAction):
        return json.dumps({"final": action.final}, separators=(",", ":"))
    return json.dumps({"tool": action.tool, **action.arguments}, separators=(",", ":"))

"""The tool table: every fact about a tool written once.

Argument checking (`actions`), the system prompt and its guidance (`prompt`), the tools a
policy enables (`Workspace.available_tools`) and the method that answers a read
(`Workspace.execute`), which observations may be elided (`context`), the JSON schema of one
action (the constrained decoder and any endpoint's `response_format`) and the daemon's
`counterfoil/status` all read `TOOLS`, so a new tool is one new row here (plus, for its effect,
the code that performs it). Functions read the
module's `TOOLS` when called, so a test may replace it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .workspace_view import WorkspaceView

# line: an integer from 1; object: a JSON object (an MCP tool's arguments)
ArgumentType = Literal["string", "argv", "line", "boolean", "object"]
# What must hold in the policy for the tool to be enabled.
Requirement = Literal["nothing", "writes", "commands", "search", "mcp"]

ARGV_RULE = "argv must contain non-empty strings without NUL"
# Bounds on an argv a person sends (settings, requests); a model's argv must be allowlisted.
MAX_ARGV_ITEMS = 256
MAX_ARGV_ITEM_CHARS = 4096


@dataclass(frozen=True)
class Argument:
    name: str
    type: ArgumentType
    required: bool = True
    default: object = None  # what the handler is given when the model leaves it out


@dataclass(frozen=True)
class Tool:
    """One tool: its arguments in the order models write them, the prompt's example, what else
    the prompt says of it (`note`, and `guidance` after every note), whether its observation may
    be elided from an old turn (it can be read again; an effect's outcome never can), and the
    method that answers a read, given the arguments in order (the course's `Workspace` method,
    and the gate's reads' of the same name that returns the call's record; an effect has none:
    it is proposed, approved and performed)."""

    name: str
    arguments: tuple[Argument, ...]
    effect: bool
    requires: Requirement
    example: Mapping[str, Any]
    note: str = ""
    guidance: tuple[str, ...] = ()
    elidable: bool = False
    handler: str | None = None

    def argument(self, name: str) -> Argument | None:
        return next((item for item in self.arguments if item.name == name), None)


TOOLS: tuple[Tool, ...] = (
    Tool(
        "list_files",
        (Argument("path", "string", required=False, default="."),),
        effect=False,
        requires="nothing",
        example={"path": "<folder>"},
        elidable=True,
        handler="list_files",
    ),
    Tool(
        "read_file",
        (
            Argument("path", "string"),
            Argument("start_line", "line", required=False),
            Argument("end_line", "line", required=False),
        ),
        effect=False,
        requires="nothing",
        example={"path": "<file>"},
        note=(
            'A result too long to show whole comes as "Tool result externalized" (an artifact_id,'
            " its size, head and tail previews with byte ranges) and an older effect may come as"
            " a compacted record with its receipt_id and artifact_id. Read more of an artifact"
            " with read_file on the path .tool-artifacts/<artifact_id>/bytes/<start>-<end> (a"
            " byte range, at most as long as the range_request it shows)."
        ),
        elidable=True,
        handler="read_file",
    ),
    Tool(
        "search_files",
        (
            Argument("pattern", "string"),
            Argument("path", "string", required=False, default="."),
            Argument("literal", "boolean", required=False, default=False),
        ),
        effect=False,
        requires="search",
        example={"pattern": "<text to find>"},
        guidance=(
            (
                "search_files finds lines matching a regular expression (literal:true for plain"
                " text) and answers path:line: text; then read_file with start_line and end_line"
                " reads just those lines, also of files too big to read whole. Search for a"
                " short name or word that is in the code, never a sentence of the task."
            ),
        ),
        elidable=True,
        handler="search_files",
    ),
    Tool(
        "write_file",
        (Argument("path", "string"), Argument("content", "string")),
        effect=True,
        requires="writes",
        example={"path": "<file>", "content": "<the whole new text of the file>"},
        guidance=("Read an existing file with read_file before you change it.",),
    ),
    Tool(
        "edit_file",
        (Argument("path", "string"), Argument("old", "string"), Argument("new", "string")),
        effect=True,
        requires="writes",
        example={
            "path": "<file>",
            "old": "<lines of the file as they are>",
            "new": "<those lines, changed as the task asks>",
        },
        guidance=("edit_file replaces old text that occurs exactly once in the file.",),
    ),
    Tool(
        "patch_file",
        (Argument("path", "string"), Argument("diff", "string")),
        effect=True,
        requires="writes",
        example={
            "path": "<file>",
            "diff": "<lines of the file after - or space, new lines after +>",
        },
        note=(
            "patch_file changes a file by one hunk of a unified diff against the file as read:"
            ' each of its lines is a line of the file after "-" (removed) or " " (kept, a line'
            ' around the change), or a new line after "+"; the kept and removed lines are'
            " consecutive lines of the file, in order."
        ),
    ),
    Tool(
        "run_command",
        (Argument("argv", "argv"),),
        effect=True,
        requires="commands",
        example={"argv": ["<an allowed command>"]},
    ),
    Tool(
        "mcp_call",
        (
            Argument("server", "string"),
            Argument("name", "string"),
            Argument("arguments", "object", required=False, default={}),
        ),
        effect=True,
        requires="mcp",
        example={"server": "files", "name": "read", "arguments": {"path": "README.md"}},
        note=(
            "mcp_call calls one tool of an MCP server listed below with arguments that match"
            " its input_schema; each call is shown to the person with its exact arguments."
        ),
    ),
)


def tool_named(name: str) -> Tool | None:
    return next((tool for tool in TOOLS if tool.name == name), None)


def tool_names() -> tuple[str, ...]:
    return tuple(tool.name for tool in TOOLS)


# How a model edits part of a file: `old` and `new` texts (edit_file), or a diff's hunk
# (patch_file). A run offers one, so the prompt and the grammar teach one form.
EDIT_FORMS = {"replace": "edit_file", "diff": "patch_file"}


def edit_tool(enabled: Iterable[str]) -> str:
    """The tool of `enabled` that changes part of a file, named in what the model is told."""
    return "patch_file" if "patch_file" in set(enabled) else "edit_file"


def enabled_tools(
    allow_writes: bool,
    allowed_commands: Sequence[Sequence[str]],
    allow_search: bool = False,
    allow_mcp: bool = False,
    edit_form: str = "replace",
) -> frozenset[str]:
    """The tools a policy with these switches enables (`allow_mcp`: the run has MCP servers;
    `edit_form`: which of `EDIT_FORMS`' tools edits part of a file)."""
    met: set[Requirement] = {"nothing"}
    if allow_mcp:
        met.add("mcp")
    if allow_search:
        met.add("search")
    if allow_writes:
        met.add("writes")
    if allowed_commands:
        met.add("commands")
    left_out = {name for form, name in EDIT_FORMS.items() if form != edit_form}
    return frozenset(
        tool.name for tool in TOOLS if tool.requires in met and tool.name not in left_out
    )


def is_argv(
    value: object, *, max_items: int | None = None, max_item_chars: int | None = None
) -> bool:
    """A non-empty list or tuple of non-empty strings without NUL (within the limits given).

    The one place this is decided: model arguments, policies, settings and requests all ask.
    """
    if not isinstance(value, (list, tuple)) or not value:
        return False
    if max_items is not None and len(value) > max_items:
        return False
    return all(
        isinstance(part, str)
        and part
        and "\0" not in part
        and (max_item_chars is None or len(part) <= max_item_chars)
        for part in value
    )


def argument_problem(tool: Tool, arguments: Mapping[str, object]) -> str | None:
    """What is wrong with `arguments` for `tool` (missing, extra, mistyped), or None."""
    extra = sorted(name for name in arguments if tool.argument(name) is None)
    if extra:
        return f"unexpected fields for {tool.name}: {', '.join(extra)}"
    missing = sorted(
        argument.name
        for argument in tool.arguments
        if argument.required and argument.name not in arguments
    )
    if missing:
        return f"missing fields for {tool.name}: {', '.join(missing)}"
    for argument in tool.arguments:
        if argument.name not in arguments:
            continue
        value = arguments[argument.name]
        if argument.type == "string" and not isinstance(value, str):
            return f"{tool.name} argument {argument.name} must be a string"
        if argument.type == "line" and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            return f"{tool.name} argument {argument.name} must be a positive integer"
        if argument.type == "boolean" and not isinstance(value, bool):
            return f"{tool.name} argument {argument.name} must be true or false"
        if argument.type == "object" and not isinstance(value, dict):
            return f"{tool.name} argument {argument.name} must be an object"
        if argument.type == "argv" and not is_argv(value):
            return ARGV_RULE if argument.name == "argv" else f"{argument.name}: {ARGV_RULE}"
    return None


def example_action(tool: Tool) -> dict[str, Any]:
    """The action the prompt shows: its values are placeholders (`<file>`), never a value a
    model could copy and have done (a small model copies examples verbatim)."""
    return {"tool": tool.name, **tool.example}


def placeholder_argument(arguments: Mapping[str, object]) -> tuple[str, str] | None:
    """The first argument (name, value) that is one of the examples' placeholders, or None;
    an argv is one when any of its items is."""
    placeholders = {
        value
        for tool in TOOLS
        for example in tool.example.values()
        for value in (example if isinstance(example, list) else [example])
        if isinstance(value, str) and value.startswith("<") and value.endswith(">")
    }
    for name, value in arguments.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item in placeholders:
                return name, item
    return None


def action_schema(
    enabled_tools: Iterable[str] | None = None,
    allowed_commands: Sequence[Sequence[str]] | None = None,
    mcp_tools: Sequence[Mapping[str, Any]] | None = None,
    view: WorkspaceView | None = None,
    *,
    text_patterns: bool = True,
) -> dict[str, Any]:
    """The JSON schema of one action: a call of an enabled tool, or `{"final": string}`.

    `enabled_tools=None` means every tool. Objects are flat, keys in the order models write
    them, no other keys allowed. When `allowed_commands` is non-empty an `argv` can only be one
    of those arrays exactly; when `mcp_tools` is given (each `{"server", "name",
    "input_schema"}`, the approved definitions), an `mcp_call` can only be one of those tools
    with arguments under its own schema. With `view` (what the workspace has shown the model
    this turn), paths, edits and rewrites are narrowed to it (`workspace_view.view_choices`),
    and the final answer is left out on a turn the view offers none (while any tool is);
    `text_patterns`: whether a string of text lines (a patch's hunk) is held to a pattern, for
    a decoder that reads a pattern over the string as JSON decodes it (llguidance).
    Raises ValueError for a tool name the table does not know.
    """
    names = tool_names()
    enabled = set(names if enabled_tools is None else enabled_tools)
    unknown = enabled - set(names)
    if unknown:
        raise ValueError(f"unknown tools: {', '.join(sorted(unknown))}")
    choices: list[dict[str, Any]] = []
    for tool in TOOLS:
        if tool.name not in enabled:
            continue
        if tool.requires == "mcp" and mcp_tools is not None:
            choices.extend(_mcp_call_schema(tool.name, offered) for offered in mcp_tools)
            continue
        properties: dict[str, Any] = {"tool": {"const": tool.name}}
        for argument in tool.arguments:
            properties[argument.name] = _value_schema(argument.type, allowed_commands)
        required = ["tool"] + [item.name for item in tool.arguments if item.required]
        if view is not None:
            from .workspace_view import view_choices  # a turn's view: not at the daemon's start

            choices.extend(view_choices(tool.name, properties, required, view, text_patterns))
            continue
        choices.append(
            {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        )
    if view is None or view.final_offered or not choices:
        choices.append(
            {
                "type": "object",
                "properties": {"final": {"type": "string"}},
                "required": ["final"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": choices}


def _mcp_call_schema(name: str, offered: Mapping[str, Any]) -> dict[str, Any]:
    """One approved MCP tool as an action: its server and name fixed, its arguments under the
    input schema the person approved."""
    return {
        "type": "object",
        "properties": {
            "tool": {"const": name},
            "server": {"const": offered["server"]},
            "name": {"const": offered["name"]},
            "arguments": dict(offered["input_schema"]),
        },
        "required": ["tool", "server", "name", "arguments"],
        "additionalProperties": False,
    }


def _value_schema(
    kind: ArgumentType, allowed_commands: Sequence[Sequence[str]] | None
) -> dict[str, Any]:
    if kind == "object":
        return {"type": "object"}
    if kind == "string":
        return {"type": "string"}
    if kind == "line":
        return {"type": "integer", "minimum": 1}
    if kind == "boolean":
        return {"type": "boolean"}
    if allowed_commands:
        return {"anyOf": [{"const": list(argv)} for argv in allowed_commands]}
    return {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}


def tool_arguments() -> dict[str, dict[str, tuple[type, bool]]]:
    """The table as `{tool: {argument: (python type, required)}}`, the tiny-llm course's shape."""
    python_types: dict[ArgumentType, type] = {
        "string": str,
        "argv": list,
        "line": int,
        "boolean": bool,
        "object": dict,
    }
    return {
        tool.name: {item.name: (python_types[item.type], item.required) for item in tool.arguments}
        for tool in TOOLS
    }

"""The system prompt: the rules of the game, showing only the tools the policy enables, and
what the root holds, so a model reads files that exist instead of guessing names."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .. import tools
from ..step_facts import OverviewFile, TreeOverview

if TYPE_CHECKING:
    from ..gate.workspace import Workspace

OVERVIEW_HEADING = (
    "The files in the project folder (path: size); read the ones the task is about with"
    " read_file first, and use these paths, not guessed ones:"
)
WORK_ORDER = (
    "Work in this order: read the files the task is about; change them (edit_file: old is"
    " lines of the file as they are, new is those lines changed as the task asks; or"
    " write_file with the whole new text); then reply with final."
)
PATCH_WORK_ORDER = (
    "Work in this order: read the files the task is about; change them (patch_file: a hunk"
    " of lines of the file as they are, after - where they go or a space where they stay,"
    " and the new lines after +; or write_file with the whole new text); then reply with final."
)
CHECK_STEP = ("; then reply", "; run an allowed command to check the change; then reply")
WORK_ORDER_WITH_COMMAND = WORK_ORDER.replace(*CHECK_STEP)
REFRESHED_HEADING = "The project folder's files changed; now (path: size):"


@runtime_checkable
class ShowsOverview(Protocol):
    """A workspace that can say what its root holds (the course's plain kind cannot)."""

    def overview(self) -> TreeOverview: ...


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def overview_lines(overview: TreeOverview) -> list[str]:
    """The overview as the model reads it: one line a file or folded folder, never JSON."""
    lines = []
    for entry in overview.entries:
        if isinstance(entry, OverviewFile):
            lines.append(f"{entry.path}: {_size(entry.size)}")
        elif entry.files is None or entry.size is None:
            lines.append(f"{entry.path}/: (not listed)")
        else:
            lines.append(f"{entry.path}/: {entry.files} files, {_size(entry.size)} (not listed)")
    if overview.more:
        lines.append(f"({overview.more} more not listed)")
    elif not overview.complete:
        lines.append("(more not listed)")
    if not lines:
        lines.append("(no files)")
    return lines


def refreshed_overview(overview: TreeOverview) -> str:
    """What follows an observation after the step changed which files the root holds."""
    return "\n".join([REFRESHED_HEADING, *overview_lines(overview)])


def _size(size: int) -> str:
    return "1 byte" if size == 1 else f"{size:,} bytes"


def build_system_prompt(workspace: Workspace, instructions: str | None = None) -> str:
    """`instructions`: the project's AGENTS.md (see agents_file.py), put last."""
    enabled = workspace.available_tools
    commands = workspace.policy.allowed_commands
    lines = [
        "You are a coding agent working in one project folder. Inspect before you edit.",
        "Reply with exactly one JSON object per turn and nothing else: no markdown, no prose.",
        "Each turn is either one tool call or the final answer.",
        "Tools (one example each; replace each <placeholder> with a real value):",
    ]
    for tool in tools.TOOLS:
        if tool.name in enabled:
            lines.append(_compact(tools.example_action(tool)))
    lines.append('When you are done, reply {"final":"what you did and how it was checked"}.')
    lines.extend(tool.note for tool in tools.TOOLS if tool.name in enabled and tool.note)
    lines.extend(line for tool in tools.TOOLS if tool.name in enabled for line in tool.guidance)
    if commands:
        lines.append("Allowed commands (argv, exactly as listed):")
        lines.extend(_compact(list(command)) for command in commands)
    # Read only where mcp_call is enabled: a course workspace has no toolbox at all.
    if "mcp_call" in enabled and (toolbox := workspace.mcp_toolbox) is not None:
        lines.append("MCP tools (server, name, description, input_schema), called with mcp_call:")
        lines.extend(_compact(offered.listing()) for offered in toolbox.offered())
    lines.append("Paths are relative to the project folder.")
    lines.append("Never invent file contents: read them with read_file.")
    order = WORK_ORDER if "edit_file" in enabled else PATCH_WORK_ORDER
    if "edit_file" in enabled or "patch_file" in enabled:
        lines.append(order.replace(*CHECK_STEP) if commands else order)
    if isinstance(workspace, ShowsOverview):
        lines.append(OVERVIEW_HEADING)
        lines.extend(overview_lines(workspace.overview()))
    if instructions and instructions.strip():
        lines.append(
            "The project's AGENTS.md, quoted below: its rules for agents. Follow them with"
            " the tools; never copy their words into a file. They add to the rules above and"
            " cannot change what the tools allow."
        )
        # Quoted line by line: a small model wrote the policy's sentence into config.json.
        lines.extend(f"> {line}".rstrip() for line in instructions.rstrip("\n").splitlines())
    return "\n".join(lines)

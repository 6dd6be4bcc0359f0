"""MCP on the terminal: the run's toolbox from the person's `--mcp-servers`, each server's
start and stop shown, a tool's definition asked about before its first use (and again, with
what changed, when it changes), and each call asked about with its exact arguments."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TextIO

from ..gate.approval import Approval
from ..gate.policy import ToolPolicy
from ..mcp.pins import PinStore
from ..mcp.toolbox import DefinitionQuestion, McpToolbox, ServerEvent
from ..proposals import McpProposal
from ..settings.table import Settings
from .approvals import read_line


def format_server_event(event: ServerEvent) -> str:
    return event.line() + "\n"


def _ask(stdin: TextIO, stdout: TextIO, question: str) -> bool:
    stdout.write(f"{question} [y/N] ")
    stdout.flush()
    answer = read_line(stdin)
    if not answer:
        stdout.write("(end of input: no)\n")
    approved = answer.strip().lower() in ("y", "yes")
    stdout.write("approved\n" if approved else "denied\n")
    return approved


def terminal_definition_confirm(
    stdin: TextIO, stdout: TextIO
) -> Callable[[DefinitionQuestion], bool]:
    """Show the whole definition (and, when it changed, what changed and the approved text)."""

    def confirm(question: DefinitionQuestion) -> bool:
        definition, check = question.definition, question.check
        stdout.write(f"\n--- MCP tool definition: {check.state} ---\n")
        stdout.write(f"server: {question.server.name} {json.dumps(question.server.identity())}\n")
        stdout.write(f"tool: {definition.name}\nsha256: {definition.sha256}\n")
        if check.state == "changed" and check.approved is not None:
            stdout.write(f"changed since approved: {', '.join(check.changes)}\n")
            stdout.write(f"approved description: {check.approved.get('description')!r}\n")
        stdout.write(f"description: {definition.description!r}\n")
        stdout.write(f"input schema: {json.dumps(definition.input_schema, indent=2)}\n")
        return _ask(stdin, stdout, "Offer this tool to the model?")

    return confirm


def terminal_mcp_confirm(
    stdin: TextIO, stdout: TextIO, interrupted: threading.Event | None = None
) -> Callable[[McpProposal], bool | Approval]:
    """Show the call with its exact arguments; only y/yes approves."""

    def confirm(proposal: McpProposal) -> bool | Approval:
        if interrupted is not None and interrupted.is_set():
            return False
        stdout.write(
            f"\n--- approval needed ---\n{proposal.tool_call_id}: mcp_call "
            f"{proposal.server['name']}/{proposal.tool}\n"
            f"  definition sha256 {proposal.definition_sha256}\n"
            f"  arguments: {json.dumps(proposal.arguments, indent=2)}\n"
        )
        try:
            return _ask(stdin, stdout, "Approve?")
        except KeyboardInterrupt:
            if interrupted is None:
                raise
            interrupted.set()
            stdout.write("\n(interrupted: not answered)\n")
            return Approval(False, withdrawn=True)

    return confirm


def terminal_toolbox(
    settings: Settings, policy: ToolPolicy, stdin: TextIO, stdout: TextIO
) -> McpToolbox | None:
    """The run's MCP servers, or None when the person configured none."""
    if not settings.mcp_servers:
        return None

    def show(event: ServerEvent) -> None:
        stdout.write(format_server_event(event))

    return McpToolbox(
        settings.mcp_servers,
        PinStore(),
        policy.root,
        hidden=policy.hidden_paths,
        withheld_environment=policy.withheld_environment,
        confirm_definition=terminal_definition_confirm(stdin, stdout),
        on_event=show,
    )

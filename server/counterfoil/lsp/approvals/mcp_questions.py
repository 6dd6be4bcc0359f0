"""The daemon's two MCP questions, asked over the same `counterfoil/confirm` request as an edit
or a command: a tool's definition before the model is offered it (the whole definition, and
what changed since the approved one), and each call with its exact arguments."""

from __future__ import annotations

from typing import Any

from ... import protocol as messages
from ...mcp.toolbox import DefinitionQuestion
from ...proposals import McpProposal

DEFINITION_TOOL = "mcp_definition"  # the confirm's `tool` for a definition: no call is made


def server_shown(identity: dict[str, Any]) -> messages.McpServerShown:
    """A server by its identity (`McpServer.identity()`), as pins and receipts name it."""
    command = identity.get("command")
    return messages.McpServerShown(
        name=str(identity["name"]),
        transport="http" if identity.get("transport") == "http" else "stdio",
        command=None if command is None else [str(part) for part in command],
        url=None if identity.get("url") is None else str(identity["url"]),
    )


def definition_call_id(question: DefinitionQuestion) -> str:
    """The question's id: a definition is asked at most once a run, by server and tool."""
    return f"mcp-definition:{question.server.name}/{question.definition.name}"


def definition_params(question: DefinitionQuestion) -> messages.ConfirmParams:
    definition, check = question.definition, question.check
    approved = check.approved if check.state == "changed" else None
    description = None if approved is None else approved.get("description")
    schema = None if approved is None else approved.get("input_schema")
    return messages.ConfirmParams(
        toolCallId=definition_call_id(question),
        tool=DEFINITION_TOOL,
        arguments={"server": question.server.name, "name": definition.name},
        preview=messages.McpDefinitionPreview(
            server=server_shown(question.server.identity()),
            tool=definition.name,
            description=definition.description,
            inputSchema=definition.input_schema,
            sha256=definition.sha256,
            state="changed" if check.state == "changed" else "new",
            changes=list(check.changes),
            approvedDescription=description if isinstance(description, str) else None,
            approvedInputSchema=schema if isinstance(schema, dict) else None,
        ),
    )


def mcp_call_preview(proposal: McpProposal) -> messages.McpCallPreview:
    return messages.McpCallPreview(
        server=server_shown(dict(proposal.server)),
        tool=proposal.tool,
        description=proposal.description,
        definitionSha256=proposal.definition_sha256,
        arguments=dict(proposal.arguments),
    )

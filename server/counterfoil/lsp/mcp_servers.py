"""The MCP servers of one daemon run: the person's own (`mcpServers` from their user settings;
a folder's value never reaches here, see settings/folder_rules.py), started when the run first
needs their tools and stopped when it ends. Each definition not pinned is asked about in the
editor (`ConfirmBridge.definition`), each call not marked read-only too (the bridge, as for a
command); each start and stop is in the daemon's log, and what the person should know now (a
server that did not start, an approval not kept) is said once."""

from __future__ import annotations

from ..gate.policy import ToolPolicy
from ..mcp.pins import PinStore
from ..mcp.toolbox import McpToolbox, ServerEvent
from ..settings.table import Settings
from .channel import ClientChannel
from .confirm_bridge import ConfirmBridge

SAID = ("not started", "not pinned")  # the events the person is told, not only logged


def run_toolbox(
    settings: Settings, policy: ToolPolicy, bridge: ConfirmBridge, channel: ClientChannel
) -> McpToolbox | None:
    """The run's toolbox, or None when the person configured no server (`mcp_call` is off)."""
    if not settings.mcp_servers:
        return None

    def show(event: ServerEvent) -> None:
        channel.log(event.line())
        if event.state in SAID:
            channel.show_message("warning", f"Counterfoil: {event.sentence}")

    return McpToolbox(
        settings.mcp_servers,
        PinStore(),
        policy.root,
        hidden=policy.hidden_paths,
        withheld_environment=policy.withheld_environment,
        confirm_definition=bridge.definition,
        on_event=show,
    )

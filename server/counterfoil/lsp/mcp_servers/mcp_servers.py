"""The MCP servers of one daemon run: the person's own (`mcpServers` from their user settings;
a folder's value never reaches here, see settings/folder_rules.py), started when the run first
needs their tools and stopped when it ends. Each definition not pinned is asked about in the
editor (`ConfirmBridge.definition`), each call not marked read-only too (the bridge, as for a
command); each start and stop is in the daemon's log, and what the person should know now (a
server that did not start, with why and what it can read; an approval not kept) is said once:
the same failure again, in the next run or a run of another folder, is only logged, until the
server starts (or fails another way)."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from ...gate.policy import ToolPolicy
from ...mcp.pins import PinStore
from ...mcp.toolbox import McpToolbox, ServerEvent
from ...settings.table import Settings
from ..approvals.confirm_bridge import ConfirmBridge
from ..channel import ClientChannel

SAID = ("not started", "not pinned")  # the events the person is told, not only logged
_told: WeakKeyDictionary[ClientChannel, set[tuple[str, str]]] = WeakKeyDictionary()


def run_toolbox(
    settings: Settings, policy: ToolPolicy, bridge: ConfirmBridge, channel: ClientChannel
) -> McpToolbox | None:
    """The run's toolbox, or None when the person configured no server (`mcp_call` is off)."""
    if not settings.mcp_servers:
        return None

    told = _told.setdefault(channel, set())

    def show(event: ServerEvent) -> None:
        channel.log(event.line())
        if event.state == "started":  # a later failure is news again
            told.difference_update({item for item in told if item[0] == event.server})
        if event.state in SAID and (event.server, event.sentence) not in told:
            told.add((event.server, event.sentence))
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

"""How to turn on a tool the model asked for but this folder has off, for the person: the
model's observation stays "tool is not enabled: edit_file" (it cannot change a setting), while
the person is told which setting enables it."""

from __future__ import annotations

from dataclasses import fields

from ...loop import AgentEvent
from ...settings.table import Settings
from ...tools import tool_named

# Which switch of the policy each tool's requirement is (tools.enabled_tools), by field name.
FIELD_FOR = {
    "writes": "allow_writes",
    "commands": "allowed_commands",
    "search": "search_files",
    "mcp": "mcp_servers",
}
SETTING_KEYS = {item.name: str(item.metadata["key"]) for item in fields(Settings)}


def enabled_by(event: AgentEvent) -> str | None:
    """The setting (its key, `allowWrites`) that enables the tool the step was refused as not
    enabled, else None."""
    tool = None if event.not_enabled is None else tool_named(event.not_enabled)
    field_name = None if tool is None else FIELD_FOR.get(tool.requires)
    return None if field_name is None else SETTING_KEYS[field_name]

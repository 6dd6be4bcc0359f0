"""Every tool a folder can have off names, for the person, the setting that turns it on."""

from __future__ import annotations

from counterfoil.lsp.runs.disabled_note import FIELD_FOR, SETTING_KEYS
from counterfoil.tools import TOOLS


def test_every_tool_that_can_be_off_names_the_setting_that_enables_it() -> None:
    needed = {tool.requires for tool in TOOLS} - {"nothing"}
    assert {requirement: SETTING_KEYS[FIELD_FOR[requirement]] for requirement in needed} == {
        "writes": "allowWrites",
        "commands": "allowedCommands",
        "search": "searchFiles",
        "mcp": "mcpServers",
    }

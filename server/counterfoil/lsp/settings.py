"""The daemon's settings: the core's `Settings`, read from what the client sends.

The client sends the settings object without its `counterfoil.` prefix, either as
`initializationOptions` or inside `workspace/didChangeConfiguration`. Checks and defaults are
the core's (`counterfoil.settings.table`).
"""

from __future__ import annotations

from typing import Any

from ..settings.table import Settings, SettingsError

__all__ = ["Settings", "SettingsError", "parse_settings", "settings_from_configuration"]


def parse_settings(raw: Any) -> Settings:
    """Turn a client's settings object into Settings, or raise naming every bad key."""
    return Settings.from_mapping(raw)


def settings_from_configuration(params_settings: Any) -> Settings | None:
    """The `counterfoil` section of a didChangeConfiguration payload; None when absent."""
    if not isinstance(params_settings, dict) or "counterfoil" not in params_settings:
        return None
    return parse_settings(params_settings["counterfoil"])

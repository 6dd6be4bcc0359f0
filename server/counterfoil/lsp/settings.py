"""The daemon's settings: the core's `Settings`, read from what the client sends.

The client sends the settings object without its `counterfoil.` prefix, either as
`initializationOptions` or inside `workspace/didChangeConfiguration`: each value by where it
was written (`{"layers": {"user": …, "workspace": …, "folder": …}}`), or flat (the person's own).
Checks, defaults and what a folder may do with each setting are the core's
(`counterfoil.settings.table`, `counterfoil.settings.layers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..settings.layers import LAYERS_KEY, LayeredSettings, layered_settings
from ..settings.refused import refusal_error
from ..settings.table import Settings, SettingsError

__all__ = [
    "LayeredSettings",
    "Settings",
    "SettingsError",
    "model_named",
    "parse_settings",
    "read_settings",
    "settings_section",
]


def read_settings(raw: Any, root: Path | None, kept: Settings | None = None) -> LayeredSettings:
    """The settings for the folder `root` from a client's settings object: a bad value of the
    person's keeps its value in `kept` (the person's settings before) or its default and is
    listed in `refused`; SettingsError only when the object is no object."""
    return layered_settings(raw, root, kept=kept)


def parse_settings(raw: Any) -> Settings:
    """Turn a client's settings object into Settings, or raise naming every bad key."""
    layered = read_settings(raw, None)
    if layered.refused:
        raise refusal_error(layered.refused)
    return layered.settings


def settings_section(params_settings: Any) -> Any | None:
    """The `counterfoil` section of a didChangeConfiguration payload; None when absent."""
    if not isinstance(params_settings, dict) or "counterfoil" not in params_settings:
        return None
    return params_settings["counterfoil"]


def model_named(sent: Any, settings: Settings) -> bool:
    """Whether the model a run uses was chosen by someone: a layer of what the client sent
    names one, or it differs from the default. With an endpoint and no model named, the run
    asks the server for its own model and no message names the default as if it were set."""
    if settings.model != Settings().model:
        return True
    if not isinstance(sent, Mapping):
        return False
    layers = sent.get(LAYERS_KEY)
    if not isinstance(layers, Mapping):
        return "model" in sent
    return any(isinstance(layer, Mapping) and "model" in layer for layer in layers.values())

"""The settings as flags: one flag per setting that has one, made from the settings table, so
checks, defaults and error messages are the ones the daemon uses."""

from __future__ import annotations

import argparse
import shlex
import typing
from dataclasses import fields
from typing import Any

from ..settings.table import Settings

# Flags that are settings: each maps to its key in `Settings.from_mapping`, so checks,
# defaults and error messages are the ones the daemon uses.
# Each setting's flag, from the settings table (`setting(flag=…)`).
SETTING_FLAGS = {
    item.metadata["key"]: item.metadata["flag"]
    for item in fields(Settings)
    if item.metadata["flag"] is not None
}


def _command(text: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"cannot split command {text!r}: {error}") from None
    if not argv:
        raise argparse.ArgumentTypeError("command must not be empty")
    return argv


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per setting that has one, made from the settings table: a boolean flag sets the
    opposite of the default (`--allow-writes`, `--no-search`), an array's flag repeats."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    hints = typing.get_type_hints(Settings)
    for item in fields(Settings):
        meta = item.metadata
        if meta["flag"] is None:
            continue
        group = meta["group"]
        if group is not None and group not in groups:
            groups[group] = parser.add_argument_group(group)
        target = parser if group is None else groups[group]
        options: dict[str, Any] = {
            "dest": meta["key"],
            "help": meta["help"].format(default=item.default),
        }
        kind = hints[item.name]
        if kind is bool:
            options.update(action="store_const", const=not item.default)
        elif kind == tuple[tuple[str, ...], ...]:
            options.update(action="append", type=_command)
        elif kind == tuple[str, ...]:
            options.update(action="append")
        elif kind in (int, int | None):
            options.update(type=int)
        elif kind is float:
            options.update(type=float)
        if meta["metavar"] is not None:
            options["metavar"] = meta["metavar"]
        if meta["choices"] is not None:
            options["choices"] = meta["choices"]
        target.add_argument(meta["flag"], **options)


def agent_settings(args: argparse.Namespace) -> Settings:
    """The settings the flags give; a flag left out takes the default. Raises SettingsError."""
    given = {key: getattr(args, key) for key in SETTING_FLAGS}
    return Settings.from_mapping(given, names=SETTING_FLAGS)

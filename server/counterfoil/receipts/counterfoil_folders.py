"""Counterfoil's own folders outside every project: the config folder (the installation
secret, the receipt-signing key, the folder grants) and the cache. Neither a command nor the
model's reads reach them, wherever the root is: a root at the home folder holds both."""

from __future__ import annotations

import os
from pathlib import Path

from .signing import config_dir


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/counterfoil` (default ~/.cache/counterfoil)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "counterfoil"


def counterfoil_folders() -> tuple[Path, ...]:
    """The config folder and the cache, as real paths (whether or not they exist yet)."""
    return tuple(Path(os.path.realpath(folder)) for folder in (config_dir(), cache_dir()))


def within(path: Path, folders: tuple[Path, ...]) -> bool:
    """True when `path` is one of `folders` or inside one, letter case aside (a case-
    insensitive disk reaches a folder under any spelling)."""
    text = str(path).casefold()
    return any(
        text == (folder_text := str(folder).casefold()) or text.startswith(folder_text + os.sep)
        for folder in folders
    )

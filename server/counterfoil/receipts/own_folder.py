"""Counterfoil's folder beside a receipt log: its content store, holds and runs live there.

The default log, `.counterfoil/receipts.jsonl`, sits in a folder of Counterfoil's own, which
holds them directly (every log in it shares them). Any other log gets a folder of its own
beside it, named for it (`.agent-receipts.jsonl` keeps `.agent-receipts.jsonl.counterfoil/`),
so a project's `objects/` or `sessions/` beside a log is never taken for Counterfoil's.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import AgentError

SHARED_FOLDER_NAME = ".counterfoil"
OWN_SUFFIX = ".counterfoil"


def shares_folder(log: Path) -> bool:
    """Whether the log's folder is Counterfoil's own (so it holds the log's state itself)."""
    return log.parent.name == SHARED_FOLDER_NAME


def own_folder(log: Path) -> Path:
    """The folder of Counterfoil's state for `log` (which may not exist yet)."""
    if shares_folder(log):
        return log.parent
    return log.parent / f".{log.name.lstrip('.')}{OWN_SUFFIX}"


def make_own_folder(log: Path) -> Path:
    """`own_folder(log)`, made private when absent; a symlink or a file there is refused."""
    folder = own_folder(log)
    if folder == log.parent:
        return folder
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise AgentError(f"could not make {folder}: {error.strerror or error}") from None
    mode = os.lstat(folder).st_mode
    if not stat.S_ISDIR(mode):
        raise AgentError(f"{folder} is not a folder of Counterfoil's (a symlink or a file)")
    return folder

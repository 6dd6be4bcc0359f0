"""What a terminal command that records effects needs before it starts: its settings, the
project's policy and the receipt store, each failure said as `error: …` lines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TextIO

from ..gate.policy import ToolPolicy
from ..receipts import ReceiptStore
from ..receipts.logfile import make_log_folder
from ..sessions.store import SessionStore
from ..settings.table import Settings, SettingsError


@dataclass(frozen=True)
class CommandSetup:
    settings: Settings
    policy: ToolPolicy
    log_path: Path
    store: ReceiptStore

    @cached_property
    def sessions(self) -> SessionStore:
        """The runs kept beside the receipt log."""
        return SessionStore(self.log_path)


def set_up_command(
    read_settings: Callable[[], Settings], root: Path, stdout: TextIO, *, log_must_exist: bool
) -> CommandSetup | None:
    """The setup for a command on `root`, or None once the reason it cannot start is written.

    A run creates the receipt log's folder; a revert needs the log to be there already.
    """
    try:
        settings = read_settings()
        policy = settings.policy(root)
    except SettingsError as error:
        stdout.writelines(f"error: {problem}\n" for problem in error.problems)
        return None
    except ValueError as error:
        stdout.write(f"error: {error}\n")
        return None
    log_path = settings.receipt_log_path(policy.root)
    if log_must_exist and not log_path.is_file():
        stdout.write(f"error: no receipt log at {log_path}\n")
        return None
    try:
        make_log_folder(log_path)
        store = ReceiptStore(log_path)
        store.require_signer()
    except (OSError, ValueError) as error:
        stdout.write(f"error: {error}\n")
        return None
    return CommandSetup(settings, policy, log_path, store)

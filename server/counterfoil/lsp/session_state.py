"""What every part of the daemon's session reads: the settings and the root `initialize` and
configuration changes set (an operation takes a copy when it starts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..settings.table import Settings


@dataclass
class SessionState:
    settings: Settings = field(default_factory=Settings)
    root: Path | None = None

    def receipt_log(self) -> Path | None:
        return None if self.root is None else self.settings.receipt_log_path(self.root)

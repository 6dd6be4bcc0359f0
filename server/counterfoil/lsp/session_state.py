"""What every part of the daemon's session reads: the settings and the root `initialize` and
configuration changes set (an operation takes a copy when it starts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gate.grants import FROM_SETTINGS, GrantedBy
from ..settings.layers import LayeredSettings
from ..settings.table import Settings
from .settings import read_settings


@dataclass
class SessionState:
    settings: Settings = field(default_factory=Settings)
    root: Path | None = None
    # What the folder's settings did, and the settings as sent (read again once a folder grant
    # is confirmed).
    layered: LayeredSettings = field(default_factory=lambda: LayeredSettings(Settings()))
    sent_settings: Any = None

    def receipt_log(self) -> Path | None:
        return None if self.root is None else self.settings.receipt_log_path(self.root)

    def adopt(self, sent: Any, layered: LayeredSettings) -> None:
        self.sent_settings, self.layered, self.settings = sent, layered, layered.settings

    def decide_again(self) -> bool:
        """Apply the settings as sent again, by what the disk holds now: what a folder's value
        is (a model folder inside the root, or a name to download) depends on files a checkout
        or a command may have made since the settings arrived, so a run decides it as it
        starts, never from an earlier look. True when what the folder's settings do changed.
        Settings set directly (not from what a client sent) stay as they are."""
        if self.sent_settings is None or self.layered.settings is not self.settings:
            return False
        layered = read_settings(self.sent_settings, self.root, self.layered.person)
        changed = (layered.settings, layered.folder_values) != (
            self.settings,
            self.layered.folder_values,
        )
        self.adopt(self.sent_settings, layered)
        return changed

    def granted_by(self) -> GrantedBy:
        """Where the grants of the settings in force came from (settings set directly, not
        from what a client sent, are the person's own)."""
        if self.layered.settings is self.settings:
            return self.layered.granted_by()
        return FROM_SETTINGS

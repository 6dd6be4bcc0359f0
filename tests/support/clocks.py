"""A clock that a test moves by handshake, so that a timeout passes when the code under test has
reached the point the test is about, however slow the machine is."""

from __future__ import annotations

import time
from pathlib import Path

JUMP_SECONDS = 3600.0


class ClockAfterReady:
    """Stands in for a module's `time`: monotonic() runs as the real clock until `ready` exists,
    then reads an hour later, past any deadline taken before. A timeout is then a handshake (the
    command writes `ready` once it is where the timeout must find it), not a race against
    Python's start-up on a busy machine."""

    def __init__(self, ready: Path) -> None:
        self.ready = ready
        self.sleep = time.sleep
        self.time = time.time
        self.time_ns = time.time_ns

    def monotonic(self) -> float:
        return time.monotonic() + (JUMP_SECONDS if self.ready.exists() else 0.0)

"""Whether a process still runs, read from /proc, for tests about what outlives a command."""

from __future__ import annotations

import sys
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def interruptible(command: list[str]) -> list[str]:
    """`command` started so that Ctrl-C reaches it as a terminal's would, even when the test
    runs in a job that ignores SIGINT (a background CI runner does, and an ignored signal
    stays ignored across exec): a trampoline restores the default, then execs the command."""
    restore = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execvp(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", restore, *command]

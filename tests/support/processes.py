"""Whether a process still runs, read from /proc, for tests about what outlives a command."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

# How long a test waits for what it expects before it fails: only a guard against a hang, never
# a measure of speed, so generous enough that no busy machine reaches it.
GUARD_SECONDS = 60.0


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_dead(pid: int, seconds: float = GUARD_SECONDS) -> bool:
    """True once the process is gone; False only if it still runs after the guard."""
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


def finishes(call: Callable[[], T], seconds: float = GUARD_SECONDS) -> T:
    """`call()`'s result, failing the test if it has not returned within the guard: for a call
    that would otherwise wait on something that never ends (a descendant holding a pipe)."""
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(call())
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds:.0f} s"
    if errors:
        raise errors[0]
    return results[0]

"""What a command leaves behind when it kills its own reaper: this process adopts it and ends it.

The reaper (reaper.py) is a child subreaper that ends everything below the command, but with the
sandbox off the command runs as the same user and can kill it; what the command started is then
re-parented to the nearest subreaper. On Linux the gate's own process (the daemon, the CLI)
makes itself one, so those orphans become its children instead of init's, and after every
command it ends each child that it did not start: a child in a session other than its own
(every process below a reaper is, since the reaper starts a new session and a session cannot be
joined) that is not a reaper still running, with everything below it. Without a subreaper
(macOS) an orphan of a killed reaper is out of reach; docs/gate.md says so.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .reaper import PR_SET_CHILD_SUBREAPER, descendants, kill_each, prctl, process_table

_lock = threading.Lock()
_own: set[tuple[int, str]] = set()  # (pid, start time) of children this process started itself
SWEEP_LIMIT_SECONDS = 5.0


@functools.cache
def adopt_orphans() -> bool:
    """Make this process the child subreaper, once; False where there is none (not Linux)."""
    return sys.platform.startswith("linux") and prctl(PR_SET_CHILD_SUBREAPER, 1)


@contextmanager
def own_child() -> Iterator[Callable[[int], None]]:
    """Hold the registry while a child is started in a session of its own (a reaper, a search
    worker): the caller notes its pid before any sweep can take it for an orphan."""
    with _lock:

        def note(pid: int) -> None:
            info = _stat(pid)
            if info is not None:
                _own.add((pid, info[3]))

        yield note


def _stat(pid: int) -> tuple[int, str, int, str] | None:
    """(parent, state, session, start time) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), fields[0].decode(), int(fields[3]), fields[19].decode()


def _adopted(me: int, session: int) -> list[int]:
    """This process's children in another session that it did not start (forgetting the
    children it started that are gone)."""
    children: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(int(name))
            if info is not None and info[0] == me and info[2] != session:
                children[int(name)] = info[3]
    _own.intersection_update(children.items())
    return [pid for pid, started in children.items() if (pid, started) not in _own]


def end_orphans() -> int:
    """Kill and reap every adopted orphan and everything below it, until none is left (or a
    few seconds pass: an orphan this user cannot kill); the number of processes killed."""
    if not adopt_orphans():
        return 0
    me, session = os.getpid(), os.getsid(0)
    killed: set[int] = set()
    deadline = time.monotonic() + SWEEP_LIMIT_SECONDS
    with _lock:
        while time.monotonic() < deadline:
            adopted = _adopted(me, session)
            if not adopted:
                break
            table = process_table()
            targets = set(adopted)
            for orphan in adopted:
                targets |= descendants(table, orphan)
            killed |= kill_each(targets)
            for pid in adopted:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            time.sleep(0.002)
    return len(killed)

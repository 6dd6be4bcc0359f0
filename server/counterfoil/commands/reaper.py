"""The process between the gate and one command: it outlives the command to kill what it left.

Run as a script by `runner.run_bounded` (`python -I -S reaper.py REPORT_FD CPU
MEMORY PROCESSES [PASSED_FD...] -- ARGV...`; the command inherits each PASSED_FD), so it is a fresh single-threaded interpreter: setting resource
limits between fork and exec (`preexec_fn`) is safe here, where it is not in a daemon with
threads. On Linux it makes itself a child subreaper, so every descendant that is orphaned, even
one that called setsid, is re-parented to it instead of to init; when the command exits, or on
SIGTERM, it kills every process still below it and reaps them. Without a subreaper (macOS) it
walks the process tree while the command runs and remembers what it saw.

It writes one JSON object to REPORT_FD: `{"status": int, "killed": int}` (killed: processes
other than the command that were still running at the end), or `{"error": [errno, strerror,
filename]}` when the command could not start. Standard library only: it runs with `-S`.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
WATCH_INTERVAL_SECONDS = 0.1
NO_LIMIT = "-"

ProcessTable = dict[int, tuple[int, str]]  # pid -> (parent pid, start time)


class Stop(Exception):
    """SIGTERM: the gate wants the command ended now (timeout, cancel, shutdown)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Stop


def prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def proc_table() -> ProcessTable:
    table: ProcessTable = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z":  # a zombie is dead already; it only waits to be reaped
            table[int(name)] = (int(fields[1]), fields[19].decode())
    return table


def ps_table() -> ProcessTable:
    listing = subprocess.run(
        ["ps", "-A", "-o", "pid=,ppid=,stat=,lstart="],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    table: ProcessTable = {}
    for line in listing.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[0].isdigit() and not parts[2].startswith("Z"):
            table[int(parts[0])] = (int(parts[1]), parts[3].strip())
    return table


def process_table() -> ProcessTable:
    return proc_table() if os.path.isdir("/proc/self") else ps_table()


def descendants(table: ProcessTable, root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _reap_all() -> int | None:
    """Reap finished children without waiting; None once no child is left at all."""
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return reaped
        reaped += 1


def kill_each(pids: set[int]) -> set[int]:
    """SIGKILL each of `pids`; those the signal reached (one already gone, or another user's,
    is passed over)."""
    killed: set[int] = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return killed


def kill_everything_below(me: int, remembered: ProcessTable) -> set[int]:
    """SIGKILL every descendant (and every remembered one still the same process) until none.

    Killing a parent re-parents its children to this subreaper, so the loop ends with no
    child left; without a subreaper it ends when the tree and the remembered pids are gone.
    """
    killed: set[int] = set()
    while True:
        table = process_table()
        targets = descendants(table, me)
        for pid, (_, started) in remembered.items():
            if pid in table and table[pid][1] == started:
                targets.add(pid)
                targets |= descendants(table, pid)
        targets.discard(me)
        killed |= kill_each(targets)
        if _reap_all() is None and not targets:
            return killed
        time.sleep(0.005)


def _limiter(cpu: str, memory: str, processes: str) -> Callable[[], None] | None:
    wanted = [
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_AS, memory),
        (getattr(resource, "RLIMIT_NPROC", None), processes),
    ]
    chosen = [
        (kind, int(value)) for kind, value in wanted if value != NO_LIMIT and kind is not None
    ]
    if not chosen:
        return None

    def set_limits() -> None:
        for kind, value in chosen:
            _, hard = resource.getrlimit(kind)
            ceiling = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (ceiling, ceiling))

    return set_limits


def _in_child(limits: Callable[[], None] | None) -> Callable[[], None]:
    """What the command's process does before exec: SIGTERM as it was before the reaper held
    it back (a blocked signal stays blocked across exec), then its resource limits."""

    def prepare() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        if limits is not None:
            limits()

    return prepare


def _discard_stop() -> None:
    """No command started: a SIGTERM held back meanwhile has nothing left to end."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _wait_for(pid: int, me: int, subreaper: bool, remembered: ProcessTable) -> int:
    """The command's exit status; without a subreaper, remember every descendant seen."""
    while True:
        if subreaper:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(wait_status)
        table = process_table()
        for seen in descendants(table, me):
            remembered.setdefault(seen, table[seen])
        time.sleep(WATCH_INTERVAL_SECONDS)


def main(arguments: list[str]) -> int:
    report_fd = int(arguments[0])
    cpu, memory, processes = arguments[1:4]
    separator = arguments.index("--", 4)
    passed = tuple(int(fd) for fd in arguments[4:separator])
    argv = arguments[separator + 1 :]
    me = os.getpid()
    signal.signal(signal.SIGTERM, _on_sigterm)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the gate died: end the command too
    subreaper = sys.platform.startswith("linux") and prctl(PR_SET_CHILD_SUBREAPER, 1)
    remembered: ProcessTable = {}
    report: dict[str, object]
    # A SIGTERM while the command starts waits until Popen has returned: raised inside Popen
    # after the fork, it read as "could not start" for a command that was running (a timeout
    # on a starved machine), and ended it as such. Held back, it ends the command as a stop.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        limits = _limiter(cpu, memory, processes)
        command = subprocess.Popen(argv, preexec_fn=_in_child(limits), pass_fds=passed)  # noqa: PLW1509 - one thread here
    except OSError as error:
        _discard_stop()
        report = {"error": [error.errno, error.strerror, error.filename]}
    except subprocess.SubprocessError as error:
        _discard_stop()
        kill_everything_below(me, remembered)
        report = {"error": [None, f"could not start: {error!r}", None]}
    else:
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # one held back: Stop
            status = _wait_for(command.pid, me, subreaper, remembered)
        except Stop:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.kill(command.pid, signal.SIGKILL)
            status = os.waitstatus_to_exitcode(os.waitpid(command.pid, 0)[1])
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        killed = kill_everything_below(me, remembered)
        report = {"status": status, "killed": len(killed)}
    os.write(report_fd, json.dumps(report).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Running one allowlisted command: no shell, nothing left behind, bounded output.

The command runs under `reaper.py`, a small process that kills every descendant
when the command ends, times out or is stopped, so when `run_bounded` returns (and the
receipt is written) nothing the command started is still running. The output is streamed
through a fixed-size buffer, so a command that prints hundreds of megabytes costs the caller
a few kilobytes, not the whole output; an `output_sink` sees every byte as it arrives (the
workspace streams it into the content store).
"""

from __future__ import annotations

import codecs
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .environment import command_environment
from .orphans import adopt_orphans, end_orphans, own_child

OUTPUT_LIMIT_CHARS = 16_000
READ_CHUNK_BYTES = 64 * 1024
DRAIN_AFTER_EXIT_SECONDS = 0.2
STOP_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.05
REAPER = Path(__file__).with_name("reaper.py")
NO_LIMIT = "-"


@dataclass(frozen=True)
class ResourceLimits:
    """setrlimit values for one command; None leaves the gate's own limit."""

    cpu_seconds: int | None = None
    memory_bytes: int | None = None  # address space (RLIMIT_AS)
    processes: int | None = None  # RLIMIT_NPROC: counts every process of the user

    def arguments(self) -> list[str]:
        return [
            NO_LIMIT if value is None else str(value)
            for value in (self.cpu_seconds, self.memory_bytes, self.processes)
        ]


@dataclass(frozen=True)
class CommandResult:
    status: int | None  # None after a timeout or a stop request
    output: str
    dropped_chars: int = 0
    terminated: bool = False  # stopped on request (cancel, shutdown) before it ended
    leftovers_killed: int = 0  # processes still running when the command ended

    @property
    def timed_out(self) -> bool:
        return self.status is None and not self.terminated

    def observation(self, stored: str | None = None) -> str:
        """The course's observation; `stored` says where the characters past its limit are
        kept (the receipt's copy of the output), so a note does not call them dropped."""
        text = status_line(self.status, self.timed_out) + f"output:\n{self.output}"
        notes = []
        if self.dropped_chars:
            notes.append(
                f"[{self.dropped_chars} more characters of output were dropped]"
                if stored is None
                else f"[{self.dropped_chars} more characters of output are not shown here; {stored}]"
            )
        if self.leftovers_killed:
            plural = "" if self.leftovers_killed == 1 else "es"
            notes.append(f"[killed {self.leftovers_killed} leftover process{plural}]")
        for note in notes:
            if not text.endswith("\n"):
                text += "\n"
            text += note
        return text


def status_line(status: int | None, timed_out: bool) -> str:
    """A command observation's first line, "status: 1", from how it ended (`status` None and
    not `timed_out`: stopped on request), so a layer that shows the line builds it from the
    record instead of cutting it out of the text."""
    words = "terminated" if status is None and not timed_out else str(status)
    return f"status: {'timeout' if timed_out else words}\n"


class _BoundedText:
    """Keeps the first `limit` characters of a byte stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[str] = []
        self.kept_chars = 0
        self.dropped_chars = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        room = self.limit - self.kept_chars
        if room > 0:
            self.kept.append(text[:room])
            self.kept_chars += min(room, len(text))
        self.dropped_chars += max(0, len(text) - max(room, 0))

    def text(self) -> str:
        return "".join(self.kept)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _read_report(fd: int) -> dict[str, object]:
    data = bytearray()
    while chunk := os.read(fd, 4096):
        data += chunk
    try:
        report = json.loads(data)
    except ValueError:
        return {}
    return report if isinstance(report, dict) else {}


class _Runner:
    """One command under its reaper: the read loop and the decisions to stop it."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        limit_chars: int,
        sink: Callable[[bytes], None] | None,
    ) -> None:
        self.process = process
        self.output = _BoundedText(limit_chars)
        self.sink = sink
        self.stop_sent_at: float | None = None

    def ask_to_stop(self, now: float) -> None:
        """SIGTERM to the reaper: it kills the command and everything below it, then reports."""
        if self.stop_sent_at is None:
            self.stop_sent_at = now
            try:
                self.process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        elif now - self.stop_sent_at > STOP_GRACE_SECONDS:
            _signal_group(self.process, signal.SIGKILL)

    def pump(self, selector: selectors.BaseSelector, pipe: int) -> None:
        """Read what is there; at end of output stop reading (the command may still run)."""
        if not selector.get_map():
            time.sleep(POLL_SECONDS)
        elif selector.select(POLL_SECONDS):
            chunk = os.read(pipe, READ_CHUNK_BYTES)
            if chunk:
                self.output.feed(chunk)
                if self.sink is not None:
                    self.sink(chunk)
            else:
                selector.unregister(pipe)


def run_bounded(
    argv: tuple[str, ...] | list[str],
    cwd: Path,
    timeout_seconds: float,
    limit_chars: int = OUTPUT_LIMIT_CHARS,
    *,
    pass_environment: Iterable[str] = (),
    withheld_environment: Iterable[str] = (),
    limits: ResourceLimits = ResourceLimits(),
    stop: threading.Event | None = None,
    output_sink: Callable[[bytes], None] | None = None,
    wrapper: tuple[str, ...] = (),
    environment: Iterable[tuple[str, str]] = (),
    pass_fds: tuple[int, ...] = (),
) -> CommandResult:
    """Run `argv` with stdout and stderr together, bounded; wait for its exit, not its EOF.

    When the command exits, the timeout passes or `stop` is set, every process it started is
    killed (even one that left its session), so a grandchild left holding the pipe neither
    survives nor keeps the call waiting. `output_sink`, when given, is called with every raw
    chunk of output in order (it must not raise). `wrapper` (a sandbox's argv prefix) runs
    between the reaper and the command, so the reaper still ends everything below it;
    `environment` adds variables; `pass_fds`, descriptors the wrapper reads (inherited through
    the reaper). Raises OSError when the command cannot start.
    Long because the process, its reader and its reaper are set up and torn down in one
    try/finally: every way out (exit, timeout, stop, an error) must end them all.
    """
    report_read, report_write = os.pipe()
    adopt_orphans()
    try:
        with own_child() as note:
            process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER), str(report_write), *limits.arguments()]
                + [*map(str, pass_fds), "--", *wrapper, *argv],
                cwd=cwd,
                env={
                    **command_environment(os.environ, pass_environment, withheld_environment),
                    **dict(environment),
                },
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(report_write, *pass_fds),
            )
            note(process.pid)
    except BaseException:
        os.close(report_read)
        raise
    finally:
        os.close(report_write)
    assert process.stdout is not None
    pipe = process.stdout.fileno()
    runner = _Runner(process, limit_chars, output_sink)
    deadline = time.monotonic() + timeout_seconds
    timed_out = terminated = False
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        try:
            while process.poll() is None:
                now = time.monotonic()
                if not (timed_out or terminated):
                    if stop is not None and stop.is_set():
                        terminated = True
                    elif now >= deadline:
                        timed_out = True
                if timed_out or terminated:
                    runner.ask_to_stop(now)
                runner.pump(selector, pipe)
            drain_until = time.monotonic() + DRAIN_AFTER_EXIT_SECONDS
            while selector.get_map() and time.monotonic() < drain_until:
                runner.pump(selector, pipe)
        finally:
            if process.poll() is None:
                runner.ask_to_stop(time.monotonic())
                try:
                    process.wait(STOP_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
            _signal_group(process, signal.SIGKILL)
            process.stdout.close()
            process.wait()
            report = _read_report(report_read)
            os.close(report_read)
            orphans = end_orphans()  # what it left if it killed its reaper
    runner.output.feed(b"", final=True)
    error = report.get("error")
    if isinstance(error, list) and len(error) == 3:
        errno, strerror, filename = error
        raise OSError(errno, strerror, filename) if errno is not None else OSError(strerror)
    status = report.get("status")
    if not isinstance(status, int):  # the runner itself failed: its own exit status
        status = process.returncode
    killed = report.get("killed")
    return CommandResult(
        None if timed_out or terminated else status,
        runner.output.text(),
        runner.output.dropped_chars,
        terminated=terminated,
        leftovers_killed=(killed if isinstance(killed, int) else 0) + orphans,
    )

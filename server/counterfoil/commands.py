"""Running one allowlisted command: no shell, a process-group timeout, bounded output.

The output is streamed through a fixed-size buffer, so a command that prints hundreds of
megabytes costs the caller a few kilobytes, not the whole output.
"""

from __future__ import annotations

import codecs
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

OUTPUT_LIMIT_CHARS = 16_000
READ_CHUNK_BYTES = 64 * 1024
DRAIN_AFTER_EXIT_SECONDS = 0.2


@dataclass(frozen=True)
class CommandResult:
    status: int | None  # None after a timeout
    output: str
    dropped_chars: int = 0

    @property
    def timed_out(self) -> bool:
        return self.status is None

    def observation(self) -> str:
        status = "timeout" if self.status is None else str(self.status)
        text = f"status: {status}\noutput:\n{self.output}"
        if self.dropped_chars:
            if not text.endswith("\n"):
                text += "\n"
            text += f"[{self.dropped_chars} more characters of output were dropped]"
        return text


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


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_bounded(
    argv: tuple[str, ...] | list[str],
    cwd: Path,
    timeout_seconds: float,
    limit_chars: int = OUTPUT_LIMIT_CHARS,
) -> CommandResult:
    """Run `argv` in its own process group; stdout and stderr together, bounded.

    When the command exits, or the timeout passes, the whole group is killed, so a
    grandchild left holding the pipe neither survives nor keeps the call waiting.
    Raises OSError when the command cannot start.
    """
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    pipe = process.stdout.fileno()
    output = _BoundedText(limit_chars)
    deadline = time.monotonic() + timeout_seconds
    exited_at: float | None = None
    timed_out = False
    with selectors.DefaultSelector() as selector:
        selector.register(pipe, selectors.EVENT_READ)
        try:
            while True:
                now = time.monotonic()
                if exited_at is None and process.poll() is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_AFTER_EXIT_SECONDS:
                    break
                if exited_at is None and now >= deadline:
                    timed_out = True
                    break
                wait = min(0.05, max(0.0, deadline - now))
                if not selector.select(wait):
                    continue
                chunk = os.read(pipe, READ_CHUNK_BYTES)
                if not chunk:
                    break
                output.feed(chunk)
        finally:
            _kill_group(process)
            process.stdout.close()
            process.wait()
    output.feed(b"", final=True)
    status = None if timed_out else process.returncode
    return CommandResult(status, output.text(), output.dropped_chars)

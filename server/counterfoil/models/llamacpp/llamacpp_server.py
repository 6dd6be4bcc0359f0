"""One llama.cpp server process on loopback: started, awaited until its model is loaded, stopped.

The server runs in a child process (`llamacpp_child`), not in Counterfoil's own: llama.cpp's
threads and memory go when it ends, a crash in it is one error line here, and Stop closes the
HTTP stream as for any model server. The child takes a random API key on its stdin and listens
on a port it picks itself, so nothing else on the machine can use it; it ends when its stdin
closes, which `stop` does, and which also happens when this process dies.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ...commands.orphans import own_child
from ..errors import ModelLoadError

CHILD = Path(__file__).with_name("llamacpp_child.py")
START_TIMEOUT_SECONDS = 600.0
STOP_SECONDS = 5.0
GGUF_MAGIC = b"GGUF"


def check_gguf_file(path: Path) -> None:
    """Refuse what is plainly not a GGUF file before a process is started for it."""
    if not path.is_file():
        raise ModelLoadError(f"{path} is not a file")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except OSError as error:
        raise ModelLoadError(f"{path} cannot be read: {error.strerror or error}") from None
    if magic != GGUF_MAGIC:
        raise ModelLoadError(f"{path} is not a GGUF file (it does not start with 'GGUF')")


def available_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS has no affinity call
        return max(1, os.cpu_count() or 1)


def load_failure(log: str) -> str:
    """llama.cpp's first error line (`E function: what`), as `what (function)`."""
    for line in log.splitlines():
        parts = line.split(" E ", 1)
        if len(parts) == 2 and ":" in parts[1]:
            where, _, what = parts[1].partition(":")
            return f"{what.strip()} ({where.split()[-1]})"
    return "see llama.cpp's log"


class LlamaCppServer:
    """A llama.cpp server for one GGUF file: `start()` returns its OpenAI base URL."""

    def __init__(
        self,
        model: Path,
        *,
        context_tokens: int,
        threads: int | None = None,
        batch_tokens: int = 256,
        start_timeout_seconds: float = START_TIMEOUT_SECONDS,
    ) -> None:
        self.model = model
        self.context_tokens = context_tokens
        self.threads = threads or available_threads()
        self.batch_tokens = batch_tokens
        self.start_timeout_seconds = start_timeout_seconds
        self.key = secrets.token_urlsafe(32)
        self.url: str | None = None
        self.process: subprocess.Popen[str] | None = None
        self._stop_on_exit: weakref.finalize[..., LlamaCppServer] | None = None

    def start(self, should_stop: Callable[[], bool] | None = None) -> str:
        """Start the process and wait until the model is loaded; `ModelLoadError` otherwise."""
        check_gguf_file(self.model)
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as log:
            # A session of its own: Ctrl-C at the terminal is Counterfoil's to handle. Noted as
            # a child this process started, so the sweep after each command leaves it running.
            with own_child() as note:
                process = subprocess.Popen(
                    [sys.executable, str(CHILD), str(self.model)]
                    + ["--context", str(self.context_tokens), "--threads", str(self.threads)]
                    + ["--batch", str(self.batch_tokens)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                    start_new_session=True,
                )
                note(process.pid)
            self.process = process
            self._stop_on_exit = weakref.finalize(self, _stop_process, process)
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(self.key + "\n")
            process.stdin.flush()
            try:
                answer = self._first_line(process, process.stdout, should_stop)
            except BaseException:
                self.stop()
                raise
            if "url" not in answer:
                self.stop()
                log.seek(0)
                reason = load_failure(log.read())
                raise ModelLoadError(f"llama.cpp could not load {self.model}: {reason}")
        # llama.cpp's log from here on goes to a file already deleted: it is not kept
        self.url = f"{str(answer['url']).rstrip('/')}/v1"
        return self.url

    def _first_line(
        self,
        process: subprocess.Popen[str],
        stdout: IO[str],
        should_stop: Callable[[], bool] | None,
    ) -> dict[str, object]:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
        reader.start()
        deadline = time.monotonic() + self.start_timeout_seconds
        while reader.is_alive():
            reader.join(0.1)
            if should_stop is not None and should_stop():
                raise ModelLoadError("stopped while llama.cpp was loading the model")
            if time.monotonic() > deadline:
                raise ModelLoadError(
                    f"llama.cpp did not load {self.model} within {self.start_timeout_seconds:g} s"
                )
        try:
            answer = json.loads(lines[0]) if lines and lines[0].strip() else {}
        except ValueError:
            answer = {}
        if not isinstance(answer, dict):
            return {}
        if "url" not in answer and process.poll() is None:
            process.wait(STOP_SECONDS)
        return answer

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """End the process (stdin closed, then SIGTERM, then SIGKILL) and wait for it."""
        if self._stop_on_exit is not None:
            self._stop_on_exit()


def _stop_process(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None:
        try:
            process.stdin.close()
        except OSError:
            pass
    for signal_it in (None, process.terminate, process.kill):
        if signal_it is not None:
            signal_it()
        try:
            process.wait(STOP_SECONDS)
            break
        except subprocess.TimeoutExpired:
            continue
    if process.stdout is not None:
        process.stdout.close()

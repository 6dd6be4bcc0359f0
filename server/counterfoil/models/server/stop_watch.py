"""Stopping a model server's answer from another thread while the caller reads it.

The stream is read on the caller's thread; a small watcher thread polls `should_stop` and, on
a stop, shuts the connection's socket down, so a read blocked on a silent server returns at
once (within `CANCEL_POLL_SECONDS`).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

CANCEL_POLL_SECONDS = 0.05


class StopWatch:
    """Polls `should_stop` on its own thread while a call runs; on a stop it shuts the
    response's socket down, so a read blocked on a silent server returns at once."""

    def __init__(self, should_stop: Callable[[], bool] | None) -> None:
        self._should_stop = should_stop
        self._stopped = threading.Event()
        self._done = threading.Event()
        self._socket: Any = None
        if should_stop is not None:
            threading.Thread(target=self._watch, name="counterfoil-stop", daemon=True).start()

    def _watch(self) -> None:
        assert self._should_stop is not None
        while not self._done.wait(CANCEL_POLL_SECONDS):
            if self._should_stop():
                self._stopped.set()
                self._shut_down()
                return

    def guard(self, response: Any) -> None:
        """Remember the socket under `response`; shut it now if the stop came first."""
        stream = response.extensions.get("network_stream")
        self._socket = stream.get_extra_info("socket") if stream is not None else None
        if self._stopped.is_set():
            self._shut_down()

    def _shut_down(self) -> None:
        if self._socket is not None:
            try:
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stopped(self) -> bool:
        return self._stopped.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when a stop came meanwhile."""
        if self._should_stop is None:
            time.sleep(seconds)
            return False
        return self._stopped.wait(seconds)

    def close(self) -> None:
        self._done.set()

"""What the daemon's worker threads may ask of the client connection.

The agent runs off the event loop, so everything here must be safe to call from any thread;
the server implements it by hopping onto the loop. Keeping it a small protocol lets the
session and the confirm bridge be driven in-process, without a transport.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Literal, Protocol

MessageKind = Literal["error", "warning", "info"]


class ClientChannel(Protocol):
    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""

    def request(self, method: str, params: Any) -> tuple[str, Future[Any]]:
        """Send a request; the future holds the client's result (or its error)."""

    def cancel_request(self, request_id: str) -> None:
        """Tell the client a request of ours no longer needs an answer."""

    def show_message(self, kind: MessageKind, text: str) -> None:
        """Something the person should see now (`window/showMessage`)."""

    def log(self, text: str) -> None:
        """One line of the trace (`window/logMessage`)."""

    def begin_progress(self, title: str, message: str) -> str | None:
        """Start a `$/progress` report; None when the client does not take them."""

    def report_progress(self, token: str | None, message: str) -> None:
        """Update a report started with `begin_progress`."""

    def end_progress(self, token: str | None, message: str) -> None:
        """Finish a report started with `begin_progress`."""

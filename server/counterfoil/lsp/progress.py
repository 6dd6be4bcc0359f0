"""`$/progress` reports, sent only once the client has accepted the token.

`window/workDoneProgress/create` is a request; until its answer arrives the reports for the
token are held back in order, and a refused token drops them. Called on the loop thread only.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

ProgressValue = (
    types.WorkDoneProgressBegin | types.WorkDoneProgressReport | types.WorkDoneProgressEnd
)

logger = logging.getLogger(__name__)


class ProgressReporter:
    def __init__(self, protocol: LanguageServerProtocol) -> None:
        self._protocol = protocol
        self._held: dict[str, list[ProgressValue] | None] = {}  # None once the token is live

    def begin(self, token: str, title: str, message: str) -> None:
        self._held[token] = [types.WorkDoneProgressBegin(title=title, message=message)]
        created = self._protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WorkDoneProgressCreateParams(token=token)
        )
        created.add_done_callback(lambda answer: self._created(token, answer))

    def report(self, token: str, message: str) -> None:
        self._emit(token, types.WorkDoneProgressReport(message=message))

    def end(self, token: str, message: str) -> None:
        self._emit(token, types.WorkDoneProgressEnd(message=message))

    def _created(self, token: str, answer: Future[Any]) -> None:
        held = self._held.get(token)
        if answer.cancelled() or answer.exception() is not None or held is None:
            logger.info("progress token %s was not accepted", token)
            self._held.pop(token, None)
            return
        self._held[token] = None
        for value in held:
            self._send(token, value)

    def _emit(self, token: str, value: ProgressValue) -> None:
        if token not in self._held:
            return
        held = self._held[token]
        if held is not None:
            held.append(value)
            return
        self._send(token, value)

    def _send(self, token: str, value: ProgressValue) -> None:
        self._protocol.notify(types.PROGRESS, types.ProgressParams(token=token, value=value))
        if isinstance(value, types.WorkDoneProgressEnd):
            self._held.pop(token, None)

"""The model's streamed text for the run panel, batched so JSON-RPC carries few messages.

Tokens arrive one at a time; sending each as a notification costs more than the token itself.
Text is held and sent at most every `BATCH_SECONDS` (and when a step ends), split at
`<think>`/`</think>` so a batch is either thinking or not, without the tags.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BATCH_SECONDS = 0.05
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

SendText = Callable[[str, bool], None]


class TextBatcher:
    def __init__(self, send: SendText, interval: float = BATCH_SECONDS) -> None:
        self._send = send
        self._interval = interval
        self._held: list[str] = []
        self._thinking = False
        self._last_sent = time.monotonic()
        self.fed = False

    def feed(self, text: str) -> None:
        if not text:
            return
        self.fed = True
        while text:
            tag = THINK_CLOSE if self._thinking else THINK_OPEN
            before, found, text = text.partition(tag)
            self._held.append(before)
            if not found:
                break
            self.flush()
            self._thinking = not self._thinking
        if time.monotonic() - self._last_sent >= self._interval:
            self.flush()

    def flush(self) -> None:
        text = "".join(self._held)
        self._held.clear()
        if text:
            self._send(text, self._thinking)
            self._last_sent = time.monotonic()

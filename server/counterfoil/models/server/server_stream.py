"""A model server's answer read as untrusted input: bounded, and scrubbed of the key.

The per-read timeout alone lets a server trickle bytes forever, and a line reader with no
bound lets one 20 MB line become the response. So each server-sent-events line is bounded in
bytes, the whole response in bytes and in wall time (both grow with `max_tokens`), and the key
the request carried is replaced by `***` in everything taken from the answer before it reaches
a person, a log, a receipt or the model: error text, event lines that are not JSON, model
names, and the content and reasoning deltas (a key split across two deltas included).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import ModelServerError

MAX_LINE_BYTES = 256 * 1024
BASE_RESPONSE_BYTES = 1024 * 1024
BYTES_PER_TOKEN = 4 * 1024  # one event per token is some 200-400 bytes on the usual servers
SECONDS_PER_TOKEN = 1.0  # the slowest server worth waiting for: one token a second
MAX_ERROR_BYTES = 64 * 1024  # what is read of an error body or a model listing
SCRUBBED = "***"


def response_byte_limit(max_tokens: int) -> int:
    return BASE_RESPONSE_BYTES + max_tokens * BYTES_PER_TOKEN


def response_seconds_limit(timeout_seconds: float, max_tokens: int) -> float:
    """The read timeout for the first token, then one second for each token asked for."""
    return timeout_seconds + max_tokens * SECONDS_PER_TOKEN


class KeyScrubber:
    """Replaces the key in text taken from a server; with no key it changes nothing."""

    def __init__(self, key: str | None) -> None:
        self.key = key or None

    def __call__(self, text: str) -> str:
        return text.replace(self.key, SCRUBBED) if self.key else text

    def stream(self) -> StreamScrubber:
        return StreamScrubber(self.key)


class StreamScrubber:
    """Scrubs text that arrives in pieces: the longest tail that could begin the key is held
    back until the next piece (or `flush`) shows whether it does."""

    def __init__(self, key: str | None) -> None:
        self._key = key
        self._held = ""

    def feed(self, piece: str) -> str:
        if not self._key:
            return piece
        text = (self._held + piece).replace(self._key, SCRUBBED)
        keep = _key_prefix_at_end(text, self._key)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held


def _key_prefix_at_end(text: str, key: str) -> int:
    for length in range(min(len(key) - 1, len(text)), 0, -1):
        if text.endswith(key[:length]):
            return length
    return 0


class ResponseBudget:
    """The bytes and the time one response may take; `where` names the server in errors."""

    def __init__(self, max_bytes: int, max_seconds: float, where: str) -> None:
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self.where = where
        self.spent = 0
        self._deadline = time.monotonic() + max_seconds

    def _take(self, count: int) -> None:
        self.spent += count
        if self.spent > self.max_bytes:
            raise ModelServerError(
                f"{self.where} sent more than {self.max_bytes // 1024} KiB for one response; "
                "stopped reading"
            )
        if time.monotonic() > self._deadline:
            raise ModelServerError(
                f"{self.where} was still answering after {self.max_seconds:g} s "
                "(the endpoint timeout plus one second per token of --max-tokens); "
                "stopped reading"
            )

    def lines(self, chunks: Iterable[bytes]) -> Iterator[str]:
        """The event stream's lines (without their line ends), each at most MAX_LINE_BYTES."""
        pending = b""
        for chunk in chunks:
            self._take(len(chunk))
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                yield self._line(line)
            if len(pending) > MAX_LINE_BYTES:
                self._line(pending)
        if pending:
            yield self._line(pending)

    def _line(self, line: bytes) -> str:
        if len(line) > MAX_LINE_BYTES:
            raise ModelServerError(
                f"{self.where} sent an event line over {MAX_LINE_BYTES // 1024} KiB; "
                "stopped reading"
            )
        return line.removesuffix(b"\r").decode("utf-8", errors="replace")

    def read(self, chunks: Iterable[bytes]) -> bytes:
        """A whole body (a response that is not streamed), within the budget."""
        parts = []
        for chunk in chunks:
            self._take(len(chunk))
            parts.append(chunk)
        return b"".join(parts)


def read_prefix(chunks: Iterable[bytes], limit: int = MAX_ERROR_BYTES) -> bytes:
    """The first `limit` bytes of a body whose rest is not needed (an error, a listing)."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


def one_line(text: str, limit: int = 200) -> str:
    return " ".join(text.split())[:limit]


def server_message(body: str) -> str:
    """The error message a server put in its body (already scrubbed), whichever of the usual
    shapes it used, on one line."""
    try:
        data = json.loads(body)
    except ValueError:
        return one_line(body)
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return one_line(str(error))
    return one_line(str(data))


def as_thinking(kind: str, text: str, reasoning: bool) -> tuple[str, bool]:
    """The progress text for a delta, and whether reasoning is still open: a server's
    reasoning deltas are wrapped in `<think>…</think>`, as a local thinking model writes them,
    so the terminal and the run panel show them as thinking (never as the action)."""
    if kind == "reasoning" and not reasoning:
        return "<think>" + text, True
    if kind == "content" and reasoning:
        return "</think>" + text, False
    return text, reasoning


def chunk_events(chunk: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """One completion chunk as (kind, value) events; parts of other shapes are skipped."""
    choices = chunk.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        if not isinstance(delta, dict):
            continue
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            yield "reasoning", str(reasoning)
        if delta.get("content"):
            yield "content", str(delta["content"])
        if choice.get("finish_reason"):
            yield "finish", str(choice["finish_reason"])
    if isinstance(chunk.get("usage"), dict):
        yield "usage", chunk["usage"]
    progress = chunk.get("prompt_progress")  # llama.cpp's, when asked with `return_progress`
    if isinstance(progress, dict):
        done, total = token_count(progress.get("processed")), token_count(progress.get("total"))
        if done is not None and total is not None:
            cached = token_count(progress.get("cache")) or 0
            milliseconds = progress.get("time_ms")
            seconds = milliseconds / 1000 if isinstance(milliseconds, int | float) else 0.0
            yield "prefill", (min(done, total), total, cached, seconds)


def token_count(value: object) -> int | None:
    """A token count as the server reported it, when it is one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

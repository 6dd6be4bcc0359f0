"""Splitting stdin into message bodies, and finding the next message after a bad frame.

A frame whose header has no usable Content-Length (letters, a sign, hex, two of them, a NUL,
no header at all) is skipped up to the next `Content-Length:`; a body declared longer than it
is, which has swallowed the start of the next header, gives that header back. So one bad
frame costs at most itself and the message after it, never the rest of the session.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
DISCARD_CHUNK_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 32 * 1024
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*([\x20-\x7e]*?)[ \t]*")
_LENGTH_VALUE = re.compile(rb"[0-9]{1,10}")
_CONTENT_LENGTH = re.compile(rb"(?i)content-length[ \t]*:")
_ID_PATTERN = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")')

logger = logging.getLogger("counterfoil.lsp")


class FdReader:
    """Blocking reads straight from a file descriptor.

    sys.stdin's buffered reader holds a lock while it blocks, and a daemon thread holding it
    makes the interpreter abort at exit; a plain descriptor has no such lock.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.buffer = bytearray()
        self._eof = False

    def fill(self) -> bool:
        if self._eof:
            return False
        chunk = os.read(self._fd, 65536)
        if not chunk:
            self._eof = True
            return False
        self.buffer += chunk
        return True

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self.fill():
                break
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def unread(self, data: bytes) -> None:
        self.buffer[:0] = data

    def header_block(self) -> bytes | None:
        """Bytes up to and including the blank line (at most MAX_HEADER_BYTES); None at EOF."""
        while True:
            end = _HEADER_END.search(self.buffer, 0, MAX_HEADER_BYTES)
            if end is not None:
                return self.read(end.end())
            if len(self.buffer) >= MAX_HEADER_BYTES or not self.fill():
                if not self.buffer:
                    return None
                return self.read(MAX_HEADER_BYTES)

    def skip_to_content_length(self) -> bool:
        """Drop bytes until the buffer starts with `Content-Length:`; False at end of input."""
        keep = len(b"content-length:") - 1
        while True:
            found = _CONTENT_LENGTH.search(self.buffer)
            if found is not None:
                del self.buffer[: found.start()]
                return True
            del self.buffer[: max(0, len(self.buffer) - keep)]
            if not self.fill():
                return False


@dataclass(frozen=True)
class Oversized:
    length: int
    msg_id: Any


Frame = bytes | Oversized | None  # None: the input ended


def content_length(block: bytes) -> tuple[int | None, bool]:
    """(the Content-Length or None when unusable, whether every line is a well-formed header)."""
    lengths: list[bytes] = []
    for line in re.split(rb"\r?\n", block):
        if not line:
            continue
        header = _HEADER_LINE.fullmatch(line)
        if header is None:
            return None, False
        if header.group(1).lower() == b"content-length":
            lengths.append(header.group(2))
    if len(lengths) != 1 or not _LENGTH_VALUE.fullmatch(lengths[0]):
        return None, True
    return int(lengths[0]), True


def leading_id(head: bytes) -> Any:
    """The id of a request we cannot decode, when it comes before its params (as clients do)."""
    before_params = head.split(b'"params"', 1)[0]
    match = _ID_PATTERN.search(before_params)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _overrun(body: bytes) -> int | None:
    """Where the first JSON value of `body` ends, when more follows it (the next header).

    Only a body that cannot be one JSON-RPC message (it does not end in `}` or `]`, or holds
    a header) is decoded here; every other body is decoded once, by dispatch.
    """
    if body.rstrip()[-1:] in (b"}", b"]") and _CONTENT_LENGTH.search(body) is None:
        return None
    text = body.decode("utf-8", "surrogateescape")
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except Exception:  # noqa: BLE001 - not one JSON value: the body is answered as it is
        return None
    if end >= len(text):
        return None
    return len(text[:end].encode("utf-8", "surrogateescape"))


def _discard(stdin: FdReader, length: int) -> Frame:
    remaining = length
    msg_id: Any = None
    while remaining:
        chunk = stdin.read(min(remaining, DISCARD_CHUNK_BYTES))
        if not chunk:
            return None
        if remaining == length:
            msg_id = leading_id(chunk)
        remaining -= len(chunk)
    return Oversized(length, msg_id)


def read_frames(stdin: FdReader, deliver: Callable[[Frame], None]) -> None:
    """Split stdin into message bodies (on a thread of its own: reads block)."""
    while True:
        block = stdin.header_block()
        if block is None:
            deliver(None)
            return
        length, well_formed = content_length(block)
        if length is None:
            if not block.strip():
                continue
            logger.warning("skipping a frame without a usable Content-Length header")
            if not well_formed:
                stdin.unread(block[1:])  # no header at all: the next one may be inside
            if not stdin.skip_to_content_length():
                deliver(None)
                return
            continue
        if length > MAX_MESSAGE_BYTES:
            oversized = _discard(stdin, length)
            deliver(oversized)
            if oversized is None:
                return
            continue
        body = stdin.read(length)
        if len(body) < length:
            deliver(None)
            return
        end = _overrun(body)
        if end is not None:
            logger.warning("a Content-Length ran past its body; reading the next header")
            stdin.unread(body[end:].lstrip())
            body = body[:end]
        deliver(body)

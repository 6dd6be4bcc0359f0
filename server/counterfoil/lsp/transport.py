"""The stdio message loop, stricter than pygls' own: bad input is answered, never fatal.

An oversized body is skipped without being held in memory, a body that is not JSON gets a
parse error, a request whose params do not fit its method gets InvalidParams with its id,
and a request without `params` is taken as `params: null`. Every request is logged to stderr
when it arrives and when it is answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

import attrs
from cattrs import Converter
from lsprotocol import converters
from lsprotocol.types import ResponseError
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.io_ import StdoutWriter
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
DISCARD_CHUNK_BYTES = 1024 * 1024
MAX_HEADER_LINES = 32
MAX_HEADER_BYTES = 1024
_ID_PATTERN = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")')

logger = logging.getLogger("counterfoil.lsp")


class LoggingProtocol(LanguageServerProtocol):
    """Logs one line per request as it arrives and one as it is answered, with its duration."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending: dict[Any, tuple[str, float]] = {}

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method is not None and msg_id is not None:
            self._pending[msg_id] = (method, time.perf_counter())
            logger.info("request %s id=%s", method, msg_id)
        super().handle_message(message)

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None
    ) -> None:
        method, started = self._pending.pop(msg_id, ("?", time.perf_counter()))
        outcome = "ok" if error is None else f"error {error.code}: {error.message}"
        elapsed = (time.perf_counter() - started) * 1000
        logger.info("response %s id=%s %s (%.1f ms)", method, msg_id, outcome, elapsed)
        super()._send_response(msg_id, result, error)


def raw_converter() -> Converter:
    """lsprotocol's converter, but custom methods keep their params and results as plain JSON.

    pygls' default turns them into namedtuples, renaming keys that are not identifiers.
    """
    converter = converters.get_converter()
    for message_type in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        names = {field.name for field in attrs.fields(message_type)}

        def keep(data: dict[str, Any], cls: type[Any], names: set[str] = names) -> Any:
            return cls(**{key: value for key, value in data.items() if key in names})

        converter.register_structure_hook(message_type, keep)
    return converter


class FdReader:
    """Blocking reads straight from a file descriptor.

    sys.stdin's buffered reader holds a lock while it blocks, and a daemon thread holding it
    makes the interpreter abort at exit; a plain descriptor has no such lock.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._eof = False

    def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = os.read(self._fd, 65536)
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def readline(self, limit: int) -> bytes:
        while True:
            newline = self._buffer.find(b"\n", 0, limit)
            if newline >= 0 or len(self._buffer) >= limit:
                end = newline + 1 if newline >= 0 else limit
                line = bytes(self._buffer[:end])
                del self._buffer[:end]
                return line
            if not self._fill():
                line = bytes(self._buffer)
                self._buffer.clear()
                return line

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size:
            if not self._fill():
                break
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


def send_error(protocol: LanguageServerProtocol, msg_id: Any, error: JsonRpcException) -> None:
    if msg_id is not None:
        protocol._send_response(msg_id, None, error.to_response_error())
        return
    # JSON-RPC wants `"id": null` when the id is unknown; the typed message would drop it.
    logger.info("error response id=null: %s", error.message)
    protocol._send_data(
        {"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}}
    )


def _valid_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _leading_id(head: bytes) -> Any:
    """The id of an oversized request, when it comes before its params (as clients write it)."""
    before_params = head.split(b'"params"', 1)[0]
    match = _ID_PATTERN.search(before_params)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if _valid_id(value) else None


def dispatch(protocol: LanguageServerProtocol, body: bytes) -> None:
    """Decode one message body and hand it to pygls, answering what pygls would drop."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        logger.warning("message is not JSON: %s", error)
        send_error(protocol, None, JsonRpcParseError(message=f"message is not JSON: {error}"))
        return
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        msg_id = data.get("id") if isinstance(data, dict) else None
        send_error(
            protocol,
            msg_id if _valid_id(msg_id) else None,
            JsonRpcInvalidRequest(message="message is not a JSON-RPC 2.0 object"),
        )
        return
    msg_id = data.get("id")
    if "id" in data and not _valid_id(msg_id):
        send_error(protocol, None, JsonRpcInvalidRequest(message="id must be a number or string"))
        return
    method = data.get("method")
    if "method" in data:
        if not isinstance(method, str):
            if "id" in data:
                send_error(
                    protocol, msg_id, JsonRpcInvalidRequest(message="method must be a string")
                )
            return
        data.setdefault("params", None)
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as error:
        logger.warning("could not read %s id=%s: %s", method, msg_id, error)
        if method is not None and "id" in data:
            send_error(
                protocol,
                msg_id,
                type(error)(message=f"params do not fit {method}: {error.message or error}"),
            )
        return
    try:
        protocol.handle_message(message)
    except Exception:  # one bad message never stops the daemon
        logger.exception("could not handle %s id=%s", method, msg_id)


@dataclass(frozen=True)
class Oversized:
    length: int
    msg_id: Any


Frame = bytes | Oversized | None  # None: the input ended


def _read_length(stdin: FdReader) -> int | None:
    """The Content-Length of the next message: None at end of input, -1 when unusable."""
    length = -1
    for _ in range(MAX_HEADER_LINES):
        line = stdin.readline(MAX_HEADER_BYTES)
        if not line:
            return None
        if not line.strip():
            if length >= 0:
                return length
            continue
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = -1
    return -1


def read_frames(stdin: FdReader, deliver: Callable[[Frame], None]) -> None:
    """Split stdin into message bodies (on a thread of its own: reads block)."""
    while True:
        length = _read_length(stdin)
        if length is None:
            deliver(None)
            return
        if length < 0:
            logger.warning("skipping a message without a usable Content-Length header")
            continue
        if length > MAX_MESSAGE_BYTES:
            remaining = length
            msg_id: Any = None
            while remaining:
                chunk = stdin.read(min(remaining, DISCARD_CHUNK_BYTES))
                if not chunk:
                    deliver(None)
                    return
                if remaining == length:
                    msg_id = _leading_id(chunk)
                remaining -= len(chunk)
            deliver(Oversized(length, msg_id))
            continue
        body = stdin.read(length)
        if len(body) < length:
            deliver(None)
            return
        deliver(body)


async def serve_frames(
    frames: asyncio.Queue[Frame], protocol: LanguageServerProtocol, stop: threading.Event
) -> None:
    while not stop.is_set():
        frame = await frames.get()
        if frame is None:
            logger.info("end of input")
            return
        if isinstance(frame, Oversized):
            logger.warning("skipped a message of %d bytes (id=%s)", frame.length, frame.msg_id)
            send_error(
                protocol,
                frame.msg_id,
                JsonRpcInvalidRequest(
                    message=f"message of {frame.length} bytes exceeds the "
                    f"{MAX_MESSAGE_BYTES}-byte limit"
                ),
            )
            continue
        dispatch(protocol, frame)


def run_stdio(
    protocol: LanguageServerProtocol,
    stdin_fd: int,
    stdout: BinaryIO,
    on_loop: Callable[[asyncio.AbstractEventLoop], None],
) -> int:
    """Serve until `exit` or the end of input; returns the process exit code."""
    stop = threading.Event()
    protocol.set_writer(StdoutWriter(stdout))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        on_loop(loop)
        frames: asyncio.Queue[Frame] = asyncio.Queue()

        def deliver(frame: Frame) -> None:
            try:
                loop.call_soon_threadsafe(frames.put_nowait, frame)
            except RuntimeError:  # the loop has closed: nobody is listening
                pass

        reader = threading.Thread(
            target=read_frames,
            args=(FdReader(stdin_fd), deliver),
            name="counterfoil-stdin",
            daemon=True,
        )
        reader.start()
        await serve_frames(frames, protocol, stop)

    try:
        asyncio.run(main())
    except SystemExit as exit_request:
        return exit_request.code if isinstance(exit_request.code, int) else 0
    except BrokenPipeError:
        logger.error("the client closed the connection")
        return 1
    return 0

"""The stdio message loop, stricter than pygls' own: bad input is answered, never fatal.

An oversized body is skipped without being held in memory, a body that is not JSON gets a
parse error, a request whose params do not fit its method gets InvalidParams with its id,
and a request without `params` is taken as `params: null`; any other failure while handling
one message is that message's error. Every request is logged to stderr when it arrives and
when it is answered. Framing, and finding the next message after a bad frame, is framing.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

import attrs
from cattrs import Converter
from lsprotocol import converters
from lsprotocol.types import ResponseError
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
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

from .framing import MAX_MESSAGE_BYTES, FdReader, Frame, Oversized, leading_id, read_frames

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


def dispatch(protocol: LanguageServerProtocol, body: bytes) -> None:
    """Decode one message body and hand it to pygls, answering what pygls would drop."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        logger.warning("message is not JSON: %s", error)
        send_error(protocol, None, JsonRpcParseError(message=f"message is not JSON: {error}"))
        return
    except RecursionError:
        logger.warning("message of %d bytes is nested too deeply", len(body))
        send_error(
            protocol,
            leading_id(body[:4096]),
            JsonRpcParseError(message="message is nested too deeply"),
        )
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


async def serve_frames(
    frames: asyncio.Queue[Frame],
    protocol: LanguageServerProtocol,
    stop: threading.Event,
    on_end: Callable[[], None] = lambda: None,
) -> None:
    while not stop.is_set():
        frame = await frames.get()
        if frame is None:
            logger.info("end of input")
            on_end()  # before the loop's teardown cancels the requests still being handled
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
        try:
            dispatch(protocol, frame)
        except Exception as error:
            logger.exception("could not handle a message of %d bytes", len(frame))
            try:
                send_error(
                    protocol,
                    leading_id(frame[:4096]),
                    JsonRpcInternalError(message=f"{type(error).__name__}: {error}"),
                )
            except Exception:
                logger.exception("could not answer the message")


def run_stdio(
    protocol: LanguageServerProtocol,
    stdin_fd: int,
    stdout: BinaryIO,
    on_loop: Callable[[asyncio.AbstractEventLoop], None],
    on_end: Callable[[], None] = lambda: None,
) -> int:
    """Serve until `exit` or the end of input (`on_end` is told first, on the loop); returns
    the process exit code."""
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
        await serve_frames(frames, protocol, stop, on_end)

    try:
        asyncio.run(main())
    except SystemExit as exit_request:
        return exit_request.code if isinstance(exit_request.code, int) else 0
    except BrokenPipeError:
        logger.error("the client closed the connection")
        return 1
    return 0

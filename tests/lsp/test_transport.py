"""The daemon's framing over raw stdio: a bad frame or body is answered or skipped, never fatal.

These tests write bytes no well-behaved client would, so they drive `python -m counterfoil.lsp`
directly instead of through pytest-lsp.
"""

from __future__ import annotations

import asyncio
import io
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.io_ import StdoutWriter

from counterfoil.lsp.framing import Frame
from counterfoil.lsp.server import build_server
from counterfoil.lsp.transport import serve_frames

SERVER_COMMAND = [sys.executable, "-m", "counterfoil.lsp"]
ANSWER_SECONDS = 10.0


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: int, method: str, params: Any = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


class RawDaemon:
    """The daemon as a subprocess: bytes in, decoded messages out (read on a thread)."""

    def __init__(self, root: Path, log: Path) -> None:
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        params: dict[str, Any] = {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        self.write(frame(request(0, "initialize", params)))
        self.answer(0)
        self.write(frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while (line := stdout.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if not line or length is None:
                return
            self.messages.put(json.loads(stdout.read(length)))

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self, msg_id: Any) -> dict[str, Any]:
        """The response to `msg_id`; fails if the daemon does not answer in time."""
        while True:
            try:
                message = self.messages.get(timeout=ANSWER_SECONDS)
            except queue.Empty:
                raise AssertionError(f"no answer to id {msg_id!r}") from None
            if message.get("id") == msg_id and "method" not in message:
                return message

    def still_serves(self, *msg_ids: int) -> None:
        for msg_id in msg_ids:
            self.write(frame(request(msg_id, "counterfoil/status")))
        for msg_id in msg_ids:
            assert "running" in self.answer(msg_id)["result"]
        assert self.process.poll() is None

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        self._log.close()


@pytest.fixture
def raw_daemon(demo_project: Path, tmp_path: Path) -> Iterator[RawDaemon]:
    daemon = RawDaemon(demo_project, tmp_path / "daemon.log")
    yield daemon
    daemon.close()


STATUS = request(5, "counterfoil/status")
BAD_FRAMES = {
    "letters": b"Content-Length: abc\r\n\r\n" + STATUS,
    "negative": b"Content-Length: -5\r\n\r\n" + STATUS,
    "hexadecimal": b"Content-Length: 0x10\r\n\r\n" + STATUS,
    "two lengths": b"Content-Length: %d\r\nContent-Length: 12\r\n\r\n" % len(STATUS) + STATUS,
    "NUL in a header name": b"Content-Le\0ngth: %d\r\n\r\n" % len(STATUS) + STATUS,
    "no header": STATUS,
    "ten bytes short": b"Content-Length: %d\r\n\r\n" % (len(STATUS) + 10) + STATUS,
}


@pytest.mark.parametrize("bad", BAD_FRAMES.values(), ids=BAD_FRAMES.keys())
def test_after_a_frame_with_an_unusable_length_the_next_messages_are_answered(
    raw_daemon: RawDaemon, bad: bytes
) -> None:
    raw_daemon.write(bad)
    raw_daemon.still_serves(1, 2)


def test_a_body_nested_too_deeply_is_an_error_not_the_end_of_the_daemon(
    raw_daemon: RawDaemon,
) -> None:
    nested = b"[" * 200_000 + b"]" * 200_000
    raw_daemon.write(frame(nested))
    assert raw_daemon.answer(None)["error"]["code"] == -32700

    deep_params = b'{"jsonrpc": "2.0", "id": 9, "method": "counterfoil/status", "params": '
    raw_daemon.write(frame(deep_params + nested + b"}"))
    assert raw_daemon.answer(9)["error"]["code"] == -32700
    raw_daemon.still_serves(1)


async def test_any_failure_while_handling_a_message_is_that_message_s_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = build_server()
    written = io.BytesIO()
    server.protocol.set_writer(StdoutWriter(written))

    def fail(data: Any) -> Any:
        raise RuntimeError("cannot structure this")

    monkeypatch.setattr(server.protocol, "structure_message", fail)
    frames: asyncio.Queue[Frame] = asyncio.Queue()
    for frame_body in (request(7, "counterfoil/status"), request(8, "counterfoil/status"), None):
        frames.put_nowait(frame_body)
    await serve_frames(frames, server.protocol, threading.Event())

    answers = [
        json.loads(part.split(b"Content-Length")[0])
        for part in written.getvalue().split(b"\r\n\r\n")[1:]
    ]
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(7, -32603), (8, -32603)]
    assert "cannot structure this" in answers[0]["error"]["message"]

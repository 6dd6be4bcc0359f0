"""Small real OpenAI-compatible chat servers on 127.0.0.1 for tests: scripted replies.

Each server is the standard library's `http.server` in a thread, speaking just enough of the
chat-completions protocol (server-sent events, `/v1/models`) for the test that starts it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from counterfoil.models import ModelProgress


@dataclass
class Recorded:
    """What the server saw: one entry per request."""

    paths: list[str] = field(default_factory=list)
    bodies: list[dict[str, object]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)


Reply = Callable[[BaseHTTPRequestHandler, int], None]


def token_texts(on_text: Callable[[str], object]) -> Callable[[ModelProgress], None]:
    """An `on_progress` that passes each streamed delta's text to `on_text`."""

    def on_progress(progress: ModelProgress) -> None:
        if progress.state == "generating" and progress.text:
            on_text(progress.text)

    return on_progress


def sse_chunk(content: str | None = None, finish: str | None = None, **extra: object) -> bytes:
    delta = {} if content is None else {"content": content}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice], **extra}).encode() + b"\n\n"


def stream_head(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Connection", "close")
    handler.end_headers()


def stream_tokens(handler: BaseHTTPRequestHandler, pieces: list[str], done: bool = True) -> None:
    stream_head(handler)
    for piece in pieces:
        handler.wfile.write(sse_chunk(piece))
        handler.wfile.flush()
    if done:
        handler.wfile.write(sse_chunk(finish="stop"))
        usage = {
            "prompt_tokens": 12,
            "completion_tokens": len(pieces),
            "total_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 8},
        }
        handler.wfile.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode())
        handler.wfile.write(b"\n\ndata: [DONE]\n\n")


def json_reply(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: object,
    headers: dict[str, str] | None = None,
) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


StartServer = Callable[[Reply], tuple[str, Recorded]]


@contextmanager
def chat_servers() -> Iterator[StartServer]:
    """Start servers whose chat-completions answer is `reply(handler, request_number)`;
    every one started is shut down on leaving."""
    servers: list[ThreadingHTTPServer] = []

    def start(reply: Reply) -> tuple[str, Recorded]:
        recorded = Recorded()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                recorded.paths.append(self.path)
                recorded.authorizations.append(self.headers.get("Authorization"))
                json_reply(self, 200, {"object": "list", "data": [{"id": "tiny"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                recorded.paths.append(self.path)
                recorded.bodies.append(json.loads(self.rfile.read(length)))
                recorded.authorizations.append(self.headers.get("Authorization"))
                try:
                    reply(self, len(recorded.bodies))
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", recorded

    try:
        yield start
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()

"""The daemon with `counterfoil.endpoint` set: a run, its key, and Stop, against a local server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from lsprotocol import types
from tests.support.chat_servers import (
    StartServer,
    chat_servers,
    sse_chunk,
    stream_head,
    stream_tokens,
)
from tests.support.processes import GUARD_SECONDS

from .conftest import StartDaemon


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


pytest.importorskip("httpx")


@pytest.fixture
def fake_server() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


READ_THEN_FINISH = ['{"tool":"read_file","path":"app.py"}', '{"final":"app.py defines double"}']


async def test_a_run_through_an_endpoint_completes_and_never_writes_the_key(
    start_daemon: StartDaemon,
    demo_project: Path,
    fake_server: StartServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-daemon-93be11c0a7"
    monkeypatch.setenv("COUNTERFOIL_DAEMON_KEY", secret)
    url, recorded = fake_server(
        lambda handler, request: stream_tokens(handler, [READ_THEN_FINISH[min(request, 2) - 1]])
    )
    daemon = await start_daemon(
        {"endpoint": url, "model": "tiny", "apiKeyEnv": "COUNTERFOIL_DAEMON_KEY"}
    )

    result = await daemon.request("counterfoil/run", {"goal": "read app.py"})

    assert result["reason"] == "completed", result
    assert daemon.steps(result)[0]["action"]["tool"] == "read_file"
    assert "def double" in daemon.steps(result)[0]["result"]
    assert recorded.authorizations[-1] == f"Bearer {secret}"
    assert {state["model"] for state in daemon.model_states} == {f"tiny at {url}"}
    assert any(
        state["state"] == "ready" and "prompt tokens cached" in state["message"]
        for state in daemon.model_states
    )
    # The server's own counts (12 prompt tokens, 8 cached, one token a response, two responses).
    assert result["modelUsage"] == "2 responses, 24 prompt tokens (16 from the cache), 2 generated"
    # The server's remark travels with the step it is about, for the run panel.
    assert any(
        "prompt tokens cached" in (event["modelNote"] or "") for event in daemon.steps(result)
    )
    written = [
        json.dumps(daemon.model_states),
        json.dumps(result),
        json.dumps([str(message) for message in daemon.client.log_messages]),
    ]
    written += [
        path.read_text(errors="replace") for path in demo_project.rglob("*") if path.is_file()
    ]
    assert not any(secret in text for text in written)


async def test_stop_while_the_server_streams_ends_the_run_as_cancelled(
    start_daemon: StartDaemon, fake_server: StartServer
) -> None:
    # The server stays silent after three tokens until the test is done with the run (the guard
    # aside); Stop's 0.5 s target is measured by bench/stop_latency.py.
    released = threading.Event()
    silence_ended = threading.Event()

    def stalls(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        for _ in range(3):
            handler.wfile.write(sse_chunk("{"))
            handler.wfile.flush()
        silent.set()
        released.wait(GUARD_SECONDS)
        silence_ended.set()

    silent = threading.Event()
    url, _ = fake_server(stalls)
    daemon = await start_daemon({"endpoint": url, "model": "tiny"})
    pending = daemon.send("counterfoil/run", {"goal": "anything"}, msg_id="run-1")
    try:
        await daemon.until(lambda: any(s["state"] == "generating" for s in daemon.model_states))
        assert await asyncio.to_thread(silent.wait, GUARD_SECONDS)
        daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-1"))
        result = await pending
        assert not silence_ended.is_set(), "the run ended with the server's silence, not Stop"
    finally:
        released.set()

    assert result["reason"] == "cancelled" and daemon.steps(result) == []


async def test_a_servers_reasoning_reaches_the_panel_as_thinking_and_is_never_the_action(
    start_daemon: StartDaemon, fake_server: StartServer
) -> None:
    def reasons_then_answers(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        thought = {"index": 0, "delta": {"reasoning_content": "read nothing; "}}
        handler.wfile.write(b"data: " + json.dumps({"choices": [thought]}).encode() + b"\n\n")
        handler.wfile.write(sse_chunk('{"final":"done"}'))
        handler.wfile.write(sse_chunk(finish="stop") + b"data: [DONE]\n\n")

    url, _ = fake_server(reasons_then_answers)
    daemon = await start_daemon({"endpoint": url, "model": "tiny"})

    result = await daemon.request("counterfoil/run", {"goal": "answer at once"})

    assert result["reason"] == "completed" and result["final"] == "done", result
    texts = daemon.told("counterfoil/modelText")
    thinking = "".join(text["text"] for text in texts if text["thinking"])
    said = "".join(text["text"] for text in texts if not text["thinking"])
    assert thinking == "read nothing; "
    assert said == '{"final":"done"}'

"""The daemon with `counterfoil.endpoint` set: a run, its key, and Stop, against a local server."""

from __future__ import annotations

import asyncio
import json
import time
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

from .conftest import StartDaemon

pytest.importorskip("httpx")


@pytest.fixture
def fake_server() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


READ_THEN_FINISH = ['{"tool":"read_file","path":"app.py"}', '{"final":"read app.py"}']


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
    def stalls(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        for _ in range(3):
            handler.wfile.write(sse_chunk("{"))
            handler.wfile.flush()
        time.sleep(4)

    url, _ = fake_server(stalls)
    daemon = await start_daemon({"endpoint": url, "model": "tiny"})
    pending = daemon.send("counterfoil/run", {"goal": "anything"}, msg_id="run-1")
    await daemon.until(lambda: any(state["state"] == "generating" for state in daemon.model_states))
    await asyncio.sleep(0.3)  # the three tokens have arrived; the server is now silent

    stopped = time.perf_counter()
    daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-1"))
    result = await pending

    # Well before the server's 4 s of silence ends; Stop's 0.5 s target is a bench's to measure.
    assert time.perf_counter() - stopped <= 2.5
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

"""The remote client against small real HTTP servers on 127.0.0.1 that misbehave on purpose.

Each server (tests/support/chat_servers.py) speaks just enough of the chat-completions protocol to
reach one failure: a refused connection, a refused key,
an unknown model, a busy server, a stream cut midway, a response past `max_tokens`, a server
slower than the timeout, a server that goes silent while the person presses Stop.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from io import StringIO
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from tests.support.chat_servers import (
    StartServer,
    chat_servers,
    json_reply,
    sse_chunk,
    stream_head,
    stream_tokens,
    token_texts,
)
from tests.support.processes import GUARD_SECONDS
from tests.support.workspaces import make_workspace

from counterfoil.cli.main import main
from counterfoil.loop import run_agent
from counterfoil.models import EndpointOptions, GenerationOptions, ModelLoadError, load_generate
from counterfoil.models.errors import GenerationCancelled, ModelServerError
from counterfoil.models.server.remote import RemoteGenerate
from counterfoil.testing.local_mlx_server import free_port


@pytest.fixture
def fake_server() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


MESSAGES = [
    {"role": "system", "content": "Reply with one JSON action."},
    {"role": "user", "content": "Say hello."},
]
FINAL = '{"final":"hello"}'


def test_streamed_response_reaches_callbacks_and_reports_cached_tokens(
    fake_server: StartServer,
) -> None:
    url, recorded = fake_server(
        lambda handler, _: stream_tokens(handler, ['{"final"', ':"hello"}'])
    )
    tokens: list[str] = []
    generate = RemoteGenerate(url, "tiny", on_progress=token_texts(tokens.append))

    assert generate(MESSAGES) == FINAL
    assert tokens == ['{"final"', ':"hello"}']
    assert generate.stats[-1].cached_tokens == 8
    assert generate.stats[-1].prompt_tokens == 12
    body = recorded.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == MESSAGES
    response_format = body["response_format"]
    assert isinstance(response_format, dict) and response_format["type"] == "json_schema"


def test_a_servers_reply_carries_its_text_its_figures_and_its_note_in_one_value(
    fake_server: StartServer,
) -> None:
    url, _ = fake_server(lambda handler, _: stream_tokens(handler, ['{"final"', ':"hello"}']))
    generate = RemoteGenerate(url, "tiny")

    reply = generate.reply(MESSAGES)

    assert reply.text == FINAL and reply.stats == generate.stats[-1]
    assert reply.stats is not None and reply.stats.cached_tokens == 8
    assert reply.note.startswith("8/12 prompt tokens cached")


def test_refused_connection_is_one_actionable_line() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelLoadError) as loading:
        load_generate("tiny", GenerationOptions(endpoint=EndpointOptions(url)))
    with pytest.raises(ModelServerError) as generating:
        RemoteGenerate(url, "tiny")(MESSAGES)
    for error in (loading.value, generating.value):
        assert "\n" not in str(error)
        assert url in str(error) and "is it running" in str(error)


def test_unauthorized_names_the_key_variable_and_never_echoes_the_key(
    fake_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-5f1d2c9e"

    def refuse(handler: BaseHTTPRequestHandler, _: int) -> None:
        json_reply(handler, 401, {"error": {"message": f"bad key {secret}"}})

    url, recorded = fake_server(refuse)
    monkeypatch.setenv("TEAM_MODEL_KEY", secret)
    generate = load_generate(
        "tiny", GenerationOptions(endpoint=EndpointOptions(url, api_key_env="TEAM_MODEL_KEY"))
    )
    with pytest.raises(ModelServerError) as error:
        generate(MESSAGES)

    assert recorded.authorizations[-1] == f"Bearer {secret}"
    assert "401" in str(error.value) and "TEAM_MODEL_KEY" in str(error.value)
    assert secret not in str(error.value) and "\n" not in str(error.value)


def test_unknown_model_points_at_the_model_list(fake_server: StartServer) -> None:
    def missing(handler: BaseHTTPRequestHandler, _: int) -> None:
        json_reply(handler, 404, {"error": {"message": "The model `nope` does not exist."}})

    url, _ = fake_server(missing)
    with pytest.raises(ModelServerError) as error:
        RemoteGenerate(url, "nope")(MESSAGES)

    assert "404" in str(error.value) and "'nope'" in str(error.value)
    assert f"{url}/models" in str(error.value)


def test_busy_server_is_retried_then_answers(fake_server: StartServer) -> None:
    def busy_once(handler: BaseHTTPRequestHandler, request: int) -> None:
        if request == 1:
            json_reply(handler, 429, {"error": "slow down"}, {"Retry-After": "0"})
        else:
            stream_tokens(handler, [FINAL])

    url, recorded = fake_server(busy_once)
    generate = RemoteGenerate(url, "tiny")

    assert generate(MESSAGES) == FINAL
    assert len(recorded.bodies) == 2
    assert generate.stats[-1].attempts == 2


def test_busy_server_is_retried_at_most_three_times(fake_server: StartServer) -> None:
    url, recorded = fake_server(
        lambda handler, _: json_reply(handler, 503, {"error": "overloaded"}, {"Retry-After": "0"})
    )
    with pytest.raises(ModelServerError) as error:
        RemoteGenerate(url, "tiny")(MESSAGES)

    assert len(recorded.bodies) == 4
    assert "503" in str(error.value) and "3 retries" in str(error.value)


def test_server_error_other_than_busy_is_not_retried(fake_server: StartServer) -> None:
    url, recorded = fake_server(
        lambda handler, _: json_reply(handler, 500, {"error": "internal failure"})
    )
    with pytest.raises(ModelServerError, match="answered 500: internal failure"):
        RemoteGenerate(url, "tiny")(MESSAGES)
    assert len(recorded.bodies) == 1


def test_stream_cut_midway_is_an_error_not_a_short_answer(fake_server: StartServer) -> None:
    url, _ = fake_server(
        lambda handler, _: stream_tokens(handler, ['{"final"', ':"hel'], done=False)
    )
    with pytest.raises(ModelServerError, match="closed the stream midway after 2 tokens"):
        RemoteGenerate(url, "tiny")(MESSAGES)


def test_stream_cut_inside_a_declared_body_is_an_error(fake_server: StartServer) -> None:
    def truncated(handler: BaseHTTPRequestHandler, _: int) -> None:
        handler.protocol_version = "HTTP/1.1"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Content-Length", "100000")
        handler.end_headers()
        handler.wfile.write(sse_chunk('{"final"'))
        handler.wfile.flush()
        handler.close_connection = True

    url, _ = fake_server(truncated)
    with pytest.raises(ModelServerError, match="closed the stream midway"):
        RemoteGenerate(url, "tiny")(MESSAGES)


def test_response_longer_than_max_tokens_is_cut_at_max_tokens(fake_server: StartServer) -> None:
    url, _ = fake_server(lambda handler, _: stream_tokens(handler, ["word "] * 50))
    tokens: list[str] = []
    generate = RemoteGenerate(url, "tiny", max_tokens=10, on_progress=token_texts(tokens.append))

    text = generate(MESSAGES)

    assert len(tokens) == 10 and text == ("word " * 10).strip()
    assert generate.stats[-1].finish_reason == "length"


def test_server_slower_than_the_timeout_fails_within_it(fake_server: StartServer) -> None:
    answered = threading.Event()  # set by the test once the call is over: the server is slower

    def slow(handler: BaseHTTPRequestHandler, _: int) -> None:
        answered.wait(GUARD_SECONDS)
        stream_tokens(handler, [FINAL])

    url, _ = fake_server(slow)
    try:
        with pytest.raises(ModelServerError) as error:
            RemoteGenerate(url, "tiny", timeout_seconds=0.5)(MESSAGES)
    finally:
        answered.set()

    assert "sent nothing for 0.5 s" in str(error.value) and "--endpoint-timeout" in str(error.value)


def test_stop_while_the_server_is_silent_ends_the_call(fake_server: StartServer) -> None:
    # The server stays silent until the test is done with the call (the guard aside); Stop's
    # 0.5 s target is measured by bench/stop_latency.py.
    released = threading.Event()
    silence_ended = threading.Event()

    def stalls(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        handler.wfile.write(sse_chunk("{"))
        handler.wfile.flush()
        released.wait(GUARD_SECONDS)
        silence_ended.set()

    url, _ = fake_server(stalls)
    stop = threading.Event()
    first_token = threading.Event()
    generate = RemoteGenerate(
        url, "tiny", on_progress=token_texts(lambda _: first_token.set()), should_stop=stop.is_set
    )

    def press_stop() -> None:  # from another thread, as the editor's Stop comes
        first_token.wait(GUARD_SECONDS)
        stop.set()

    threading.Thread(target=press_stop, daemon=True).start()
    try:
        with pytest.raises(GenerationCancelled):
            generate(MESSAGES)
        assert not silence_ended.is_set(), "the call ended with the server's silence, not Stop"
    finally:
        released.set()

    assert first_token.is_set() and generate.stats == []


def test_key_is_sent_but_never_written_by_a_cli_run(
    fake_server: StartServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-cli-7a4be02d19"
    url, recorded = fake_server(lambda handler, _: stream_tokens(handler, [FINAL]))
    monkeypatch.setenv("COUNTERFOIL_TEST_KEY", secret)
    (tmp_path / "app.py").write_text("print('hi')\n", encoding="utf-8")
    output = StringIO()
    caplog.set_level(logging.DEBUG)

    status = main(
        [
            "agent",
            "say hello",
            "--root",
            str(tmp_path),
            "--endpoint",
            url,
            "--model",
            "tiny",
            "--api-key-env",
            "COUNTERFOIL_TEST_KEY",
        ],
        stdin=StringIO(""),
        stdout=output,
    )

    assert status == 0, output.getvalue()
    assert recorded.authorizations[-1] == f"Bearer {secret}"
    written = [output.getvalue(), caplog.text]
    written += [path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file()]
    assert not any(secret in text for text in written)
    assert any("run ended: completed" in text for text in written)


def test_stop_during_a_remote_response_ends_the_agent_run_as_cancelled(
    fake_server: StartServer, tmp_path: Path
) -> None:
    def stalls(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        handler.wfile.write(sse_chunk("{"))
        handler.wfile.flush()
        released.wait(GUARD_SECONDS)

    released = threading.Event()
    url, _ = fake_server(stalls)
    stop = threading.Event()
    generate = RemoteGenerate(
        url, "tiny", on_progress=token_texts(lambda _: stop.set()), should_stop=stop.is_set
    )

    try:
        run = run_agent("say hello", generate, make_workspace(tmp_path), should_stop=stop.is_set)
    finally:
        released.set()

    assert run.reason == "cancelled" and run.error is None and run.events == ()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], {"type": "json_schema"}),
        (["--schema-mode", "json_object"], {"type": "json_object"}),
        (["--schema-mode", "structured_outputs"], None),
        (["--no-constrain"], None),
    ],
)
def test_cli_schema_flags_choose_the_request_form(
    fake_server: StartServer, tmp_path: Path, flags: list[str], expected: dict[str, str] | None
) -> None:
    url, recorded = fake_server(lambda handler, _: stream_tokens(handler, [FINAL]))
    argv = ["agent", "say hello", "--root", str(tmp_path), "--endpoint", url, "--model", "tiny"]

    assert main([*argv, *flags], stdin=StringIO(""), stdout=StringIO()) == 0

    body = recorded.bodies[-1]
    response_format = body.get("response_format")
    if expected is None:
        assert response_format is None
    else:
        assert isinstance(response_format, dict)
        assert response_format["type"] == expected["type"]
    assert ("structured_outputs" in body) == ("structured_outputs" in flags)


def test_reasoning_is_streamed_to_the_callback_but_never_parsed(fake_server: StartServer) -> None:
    def thinks(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        for thought in ("The user wants ", '{"final":"not this"}'):
            choice = {"index": 0, "delta": {"reasoning_content": thought}, "finish_reason": None}
            handler.wfile.write(b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n")
        for piece in ("<think>more</think>", FINAL):
            handler.wfile.write(sse_chunk(piece))
        handler.wfile.write(sse_chunk(finish="stop") + b"data: [DONE]\n\n")

    url, _ = fake_server(thinks)
    tokens: list[str] = []

    response = RemoteGenerate(url, "tiny", on_progress=token_texts(tokens.append))(MESSAGES)

    assert response == FINAL
    # Shown as a thinking block, as a local thinking model writes one.
    assert tokens[:3] == [
        "<think>The user wants ",
        '{"final":"not this"}',
        "</think><think>more</think>",
    ]

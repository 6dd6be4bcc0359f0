"""A model server's answer is untrusted input: the key never comes back out of it, and it is
bounded in bytes and in time, and a response that is not the schema's object is reported.

Each server here (tests/support/chat_servers.py, on 127.0.0.1) misbehaves in one way: it echoes the
key where an error, a progress report or the action would carry it, streams forever, sends one
huge line, or answers with whitespace.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

pytest.importorskip("httpx")

from tests.support.chat_servers import (
    StartServer,
    chat_servers,
    sse_chunk,
    stream_head,
    stream_tokens,
)
from tests.support.processes import finishes

from counterfoil.models import ModelProgress
from counterfoil.models.errors import ModelServerError
from counterfoil.models.server.remote import NOT_ENFORCED, RemoteGenerate
from counterfoil.models.server.server_stream import MAX_LINE_BYTES, StreamScrubber

KEY = "sk-live-0123456789abcdef0123456789abcdef"
MESSAGES = [{"role": "user", "content": "Say hello."}]


@pytest.fixture
def fake_server() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


def client(
    url: str, progress: list[ModelProgress] | None = None, **options: object
) -> RemoteGenerate:
    return RemoteGenerate(
        url,
        "tiny",
        api_key=KEY,
        on_progress=None if progress is None else progress.append,
        **options,  # type: ignore[arg-type]
    )


def echo_raw(body: bytes, content_type: str = "text/event-stream") -> object:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(body)

    return reply


def assert_no_key(text: str) -> None:
    assert KEY not in text and KEY[:12] not in text


# The key never comes back out


def test_a_key_echoed_in_a_data_line_that_is_not_json_is_scrubbed(fake_server: StartServer) -> None:
    url, _ = fake_server(echo_raw(f"data: Authorization: Bearer {KEY}\n\n".encode()))

    with pytest.raises(ModelServerError) as failure:
        client(url)(MESSAGES)

    assert "not JSON" in str(failure.value) and "***" in str(failure.value)
    assert_no_key(str(failure.value))


def test_a_key_at_the_cut_of_a_long_error_is_not_left_half_shown(fake_server: StartServer) -> None:
    message = "x" * 180 + f" {KEY}"  # cut at 200 characters: inside the key
    chunk = json.dumps({"error": {"message": message}})
    url, _ = fake_server(echo_raw(f"data: {chunk}\n\n".encode()))

    with pytest.raises(ModelServerError) as failure:
        client(url)(MESSAGES)

    assert_no_key(str(failure.value))


def test_a_key_echoed_in_a_malformed_header_is_scrubbed(fake_server: StartServer) -> None:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        handler.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + f"Bearer {KEY}\r\n\r\n".encode()
        )

    url, _ = fake_server(reply)

    with pytest.raises(ModelServerError) as failure:
        client(url)(MESSAGES)

    assert_no_key(str(failure.value))


def test_a_key_in_content_deltas_reaches_neither_the_progress_nor_the_action(
    fake_server: StartServer,
) -> None:
    half = len(KEY) // 2
    pieces = ['{"final":"', KEY[:half], KEY[half:], '"}']
    url, _ = fake_server(lambda handler, _: stream_tokens(handler, pieces))
    progress: list[ModelProgress] = []

    text = client(url, progress)(MESSAGES)

    shown = "".join(report.text for report in progress)
    assert_no_key(shown)
    assert_no_key(text)
    assert text == '{"final":"***"}' and shown == text


def test_a_key_in_reasoning_deltas_is_scrubbed_from_what_is_shown(fake_server: StartServer) -> None:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        reasoning = {"choices": [{"delta": {"reasoning_content": f"the key is {KEY}"}}]}
        handler.wfile.write(b"data: " + json.dumps(reasoning).encode() + b"\n\n")
        handler.wfile.write(sse_chunk('{"final":"hello"}', finish="stop"))
        handler.wfile.write(b"data: [DONE]\n\n")

    url, _ = fake_server(reply)
    progress: list[ModelProgress] = []

    assert client(url, progress)(MESSAGES) == '{"final":"hello"}'

    assert_no_key("".join(report.text + report.message + report.note for report in progress))


def test_the_stream_scrubber_catches_a_key_split_in_any_two_pieces() -> None:
    for cut in range(len(KEY) + 1):
        scrubber = StreamScrubber(KEY)
        shown = scrubber.feed("before " + KEY[:cut]) + scrubber.feed(KEY[cut:] + " after")
        assert shown + scrubber.flush() == "before *** after"


# Bounded in bytes and in time


def test_a_server_streaming_empty_deltas_forever_is_cut_off_by_bytes(
    fake_server: StartServer,
) -> None:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        empty = b'data: {"choices":[{"index":0,"delta":{}}]}\n\n' * 1000
        while True:
            handler.wfile.write(empty)

    url, _ = fake_server(reply)

    with pytest.raises(ModelServerError, match="sent more than .* KiB for one response"):
        client(url, max_tokens=4)(MESSAGES)


def test_a_server_trickling_empty_deltas_is_cut_off_by_wall_time(
    fake_server: StartServer,
) -> None:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        while True:
            handler.wfile.write(b'data: {"choices":[{"index":0,"delta":{}}]}\n\n')
            handler.wfile.flush()
            time.sleep(0.05)

    url, _ = fake_server(reply)

    with pytest.raises(ModelServerError, match="still answering after 1.5 s"):
        finishes(lambda: client(url, max_tokens=1, timeout_seconds=0.5)(MESSAGES))


def test_one_huge_data_line_is_refused_not_taken_as_the_response(
    fake_server: StartServer,
) -> None:
    content = "x" * (20 * 1024 * 1024)
    url, _ = fake_server(echo_raw(sse_chunk(content)))

    with pytest.raises(ModelServerError, match=f"event line over {MAX_LINE_BYTES // 1024} KiB"):
        client(url, max_tokens=4)(MESSAGES)


def test_a_huge_answer_that_is_not_streamed_is_refused(fake_server: StartServer) -> None:
    body = json.dumps({"choices": [{"message": {"content": "x" * (8 * 1024 * 1024)}}]})
    url, _ = fake_server(echo_raw(body.encode(), "application/json"))

    with pytest.raises(ModelServerError, match="KiB for one response"):
        client(url, max_tokens=4)(MESSAGES)


# A response that is not the schema's object


@pytest.mark.parametrize("pieces", [["   ", "\n"], ["\n"], []])
def test_a_response_of_only_whitespace_is_reported_as_not_enforcing_the_schema(
    fake_server: StartServer, pieces: list[str]
) -> None:
    url, _ = fake_server(lambda handler, _: stream_tokens(handler, pieces))
    progress: list[ModelProgress] = []
    generate = client(url, progress)

    generate(MESSAGES)

    assert generate.schema_enforced is False
    assert [report for report in progress if NOT_ENFORCED in report.note]


def test_a_response_cut_off_while_thinking_is_not_taken_for_an_unenforced_schema(
    fake_server: StartServer,
) -> None:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        reasoning = {"choices": [{"delta": {"reasoning_content": "hmm"}, "finish_reason": None}]}
        handler.wfile.write(b"data: " + json.dumps(reasoning).encode() + b"\n\n")
        handler.wfile.write(sse_chunk(finish="length"))
        handler.wfile.write(b"data: [DONE]\n\n")

    url, _ = fake_server(reply)
    generate = client(url)

    assert generate(MESSAGES) == ""
    assert generate.schema_enforced is None

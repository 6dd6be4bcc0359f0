"""A model server states no context window: `contextTokens` gives it one, and the server's own
count of the last prompt (`usage.prompt_tokens`) counts the conversation."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from io import StringIO
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from tests.support.chat_servers import Reply, StartServer, chat_servers, sse_chunk, stream_head

from counterfoil.cli.main import main
from counterfoil.context.budget import estimate_tokens
from counterfoil.models.server.remote import RemoteGenerate
from counterfoil.models.server.server_tokens import MAX_SCALE, ServerTokenCount

MESSAGES = [
    {"role": "system", "content": "Reply with one JSON action."},
    {"role": "user", "content": "Say hello."},
]
TURN = [
    {"role": "assistant", "content": '{"tool":"read_file","path":"app.py"}'},
    {"role": "user", "content": "Tool result:\n" + "x = 1\n" * 40},
]
READ_APP = '{"tool":"read_file","path":"app.py"}'
FINAL = '{"final":"read"}'


@pytest.fixture
def fake_server() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


def answer(text: str, prompt_tokens: int) -> Reply:
    """A reply that streams `text` and reports `prompt_tokens` in its usage."""

    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        stream_head(handler)
        handler.wfile.write(sse_chunk(text))
        handler.wfile.write(sse_chunk(finish="stop"))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": 1}
        handler.wfile.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode())
        handler.wfile.write(b"\n\ndata: [DONE]\n\n")

    return reply


def read_then_final(handler: BaseHTTPRequestHandler, number: int) -> None:
    """Reads app.py, then answers; the server counts 5,000 prompt tokens each time."""
    answer(READ_APP if number == 1 else FINAL, 5_000)(handler, number)


def test_before_any_answer_the_count_is_an_estimate() -> None:
    assert ServerTokenCount()(MESSAGES) == estimate_tokens(MESSAGES)


def test_a_grown_conversation_is_the_servers_count_plus_the_scaled_rest() -> None:
    count = ServerTokenCount()
    count.seen(MESSAGES, 2 * estimate_tokens(MESSAGES))  # this server's tokens are small
    grown = MESSAGES + TURN
    assert count(MESSAGES) == 2 * estimate_tokens(MESSAGES)
    assert count(grown) == 2 * estimate_tokens(MESSAGES) + 2 * estimate_tokens(TURN)


def test_a_conversation_changed_before_its_end_is_estimated_afresh_at_the_servers_scale() -> None:
    count = ServerTokenCount()
    seen = MESSAGES + TURN
    count.seen(seen, 3 * estimate_tokens(seen))
    elided = [*seen[:-1], {"role": "user", "content": "Tool result:\n[read_file app.py: elided]"}]
    assert count(elided) == 3 * estimate_tokens(elided)


@pytest.mark.parametrize("reported", [None, 0, -5, True, "12"])
def test_a_count_the_server_did_not_give_is_ignored(reported: object) -> None:
    count = ServerTokenCount()
    count.seen(MESSAGES, reported)
    assert count(MESSAGES + TURN) == estimate_tokens(MESSAGES + TURN)


def test_an_odd_count_is_held_to_a_sane_scale() -> None:
    count = ServerTokenCount()
    count.seen(MESSAGES, 1_000_000)
    changed = [MESSAGES[0], {"role": "user", "content": "Say goodbye."}]
    assert count(changed) == math.ceil(MAX_SCALE * estimate_tokens(changed))


def test_the_remote_client_counts_from_the_usage_of_its_last_answer(
    fake_server: StartServer,
) -> None:
    url, _ = fake_server(answer(FINAL, 500))
    generate = RemoteGenerate(url, "tiny")
    assert generate.count_tokens(MESSAGES) == estimate_tokens(MESSAGES)

    generate(MESSAGES)

    assert generate.count_tokens(MESSAGES) == 500
    assert generate.count_tokens(MESSAGES + TURN) > 500 + estimate_tokens(TURN)


def cli_run(start: StartServer, root: Path, *flags: str) -> tuple[int, str]:
    url, _ = start(read_then_final)
    output = StringIO()
    argv = ["agent", "read app.py", "--root", str(root), "--endpoint", url, "--model", "tiny"]
    status = main([*argv, "--max-tokens", "100", *flags], stdin=StringIO(""), stdout=output)
    return status, output.getvalue()


def test_context_tokens_gives_a_server_a_window_counted_by_the_server(
    fake_server: StartServer, demo_project: Path
) -> None:
    """The server counts 5,000 tokens where four characters a token would make a few hundred:
    with a window of 4,000 the run ends at the limit; without the setting, it completes."""
    status, output = cli_run(fake_server, demo_project, "--context-tokens", "4000")
    assert "== run ended: context_limit ==" in output
    assert status == 3

    status, output = cli_run(fake_server, demo_project, "--context-tokens", "100000")
    assert "== run ended: completed ==" in output

    status, output = cli_run(fake_server, demo_project)
    assert "== run ended: completed ==" in output

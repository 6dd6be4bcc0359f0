"""The key goes only where the person sent it: the endpoint they configured, over https:// or
to this machine, and never on a redirect to another address."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

pytest.importorskip("httpx")

from tests.support.chat_servers import StartServer, chat_servers, stream_tokens

from counterfoil.models import EndpointOptions, GenerationOptions, ModelLoadError, load_generate
from counterfoil.models.errors import ModelServerError
from counterfoil.models.server.remote import RemoteGenerate

MESSAGES = [{"role": "user", "content": "Say hello."}]
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def servers() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


def redirecting_to(target: str) -> object:
    def reply(handler: BaseHTTPRequestHandler, _: int) -> None:
        handler.send_response(307)
        handler.send_header("Location", f"{target}/chat/completions")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return reply


def test_a_redirect_to_another_address_is_not_followed_with_the_key(
    servers: StartServer,
) -> None:
    elsewhere, seen_there = servers(lambda handler, _: stream_tokens(handler, ["{}"]))
    url, seen_here = servers(redirecting_to(elsewhere))  # type: ignore[arg-type]
    generate = RemoteGenerate(url, "tiny", api_key=KEY)

    with pytest.raises(ModelServerError, match="redirected to"):
        generate(MESSAGES)

    assert seen_here.authorizations == [f"Bearer {KEY}"]
    assert seen_there.paths == []


def test_the_key_is_not_sent_in_the_clear_to_another_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEAM_KEY", KEY)
    endpoint = EndpointOptions(
        "http://192.0.2.1:9/v1", api_key_env="TEAM_KEY", allow_insecure_http=True
    )

    with pytest.raises(ModelLoadError) as refused:
        load_generate("tiny", GenerationOptions(endpoint=endpoint))

    assert "TEAM_KEY" in str(refused.value)
    assert KEY not in str(refused.value)

"""A proxy from the environment: never for this machine, for another only when asked, and an
https:// endpoint only ever tunnelled through it (the proxy sees no prompt and no key).

The proxy is a small recording server on 127.0.0.1 that answers nothing useful: what matters
is which requests reach it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("httpx")

from tests.support.chat_servers import StartServer, chat_servers, stream_tokens

from counterfoil.cli.main import build_parser
from counterfoil.models import EndpointOptions, GenerationOptions, ModelLoadError, load_generate
from counterfoil.models.errors import ModelServerError
from counterfoil.models.server.endpoint import environment_proxy
from counterfoil.models.server.remote import RemoteGenerate
from counterfoil.settings.table import Settings

KEY = "sk-proxy-test-0123456789"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A proxy every proxy variable names; yields the request lines (and headers) it saw."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def answer(self) -> None:
            seen.append(f"{self.command} {self.path}\n{self.headers}")
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()

        do_GET = do_POST = do_CONNECT = answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fake_server() -> Iterator[StartServer]:
    with chat_servers() as start:
        yield start


MESSAGES = [{"role": "user", "content": "Say hello."}]


@pytest.mark.parametrize("asked", [False, True])
def test_a_loopback_endpoint_never_goes_through_the_environments_proxy(
    fake_server: StartServer, proxy: list[str], asked: bool
) -> None:
    url, recorded = fake_server(lambda handler, _: stream_tokens(handler, ['{"final":"hi"}']))
    generate = RemoteGenerate(url, "tiny", api_key=KEY, use_environment_proxy=asked)

    assert generate(MESSAGES) == '{"final":"hi"}'
    assert recorded.authorizations == [f"Bearer {KEY}"]
    assert proxy == []


def test_another_machine_is_not_reached_through_the_proxy_unless_asked(proxy: list[str]) -> None:
    generate = RemoteGenerate("https://models.invalid/v1", "tiny", api_key=KEY)

    with pytest.raises(ModelServerError):
        generate(MESSAGES)

    assert proxy == []


def test_an_https_endpoint_is_only_tunnelled_through_the_proxy_asked_for(
    proxy: list[str],
) -> None:
    generate = RemoteGenerate(
        "https://models.invalid/v1", "tiny", api_key=KEY, use_environment_proxy=True
    )

    with pytest.raises(ModelServerError):
        generate(MESSAGES)

    assert [seen.splitlines()[0] for seen in proxy] == ["CONNECT models.invalid:443"]
    assert KEY not in "".join(proxy) and "Say hello" not in "".join(proxy)


def test_no_proxy_exempts_a_host_even_when_the_proxy_is_asked_for(
    proxy: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "models.invalid")

    assert environment_proxy("https://models.invalid/v1", use_environment_proxy=True) is None
    assert environment_proxy("https://other.invalid/v1", use_environment_proxy=True)


def test_a_proxy_that_is_not_http_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://user:secret@127.0.0.1:1080")
    options = GenerationOptions(
        endpoint=EndpointOptions("https://models.invalid/v1", use_environment_proxy=True)
    )

    with pytest.raises(ModelLoadError, match="not an http\\(s\\) proxy") as refusal:
        load_generate("tiny", options)

    assert "secret" not in str(refusal.value)


def test_the_proxy_opt_in_is_a_setting_and_a_flag_off_by_default() -> None:
    assert Settings().use_environment_proxy is False
    assert Settings.from_mapping({"useEnvironmentProxy": True}).use_environment_proxy is True
    options = GenerationOptions.from_settings(
        Settings.from_mapping(
            {"endpoint": "https://models.invalid/v1", "useEnvironmentProxy": True}
        )
    )
    assert options.endpoint is not None and options.endpoint.use_environment_proxy is True
    args = build_parser().parse_args(["agent", "goal", "--root", ".", "--use-environment-proxy"])
    assert args.useEnvironmentProxy is True

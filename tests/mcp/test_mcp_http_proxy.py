"""A server over HTTP is reached as the model endpoint is: the environment's proxy only when
the entry says `"useEnvironmentProxy": true` (one rule, `settings/endpoints.py`)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.support.mcp_servers import Person, toolbox

from counterfoil.mcp.servers import McpServer

FAILURE_GUARD_SECONDS = 60.0


@contextmanager
def recording_proxy() -> Iterator[tuple[str, list[bytes]]]:
    """A listener standing in for the environment's proxy: it records what reaches it and
    closes each connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(FAILURE_GUARD_SECONDS)
    seen: list[bytes] = []

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            connection.settimeout(FAILURE_GUARD_SECONDS)
            seen.append(connection.recv(4096))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        # The connection that came is recorded before the listener closes (closing first can
        # drop one not yet accepted).
        thread.join(FAILURE_GUARD_SECONDS)
        listener.close()


def start(server: McpServer, tmp_path: Path) -> None:
    box = toolbox((server,), tmp_path, tmp_path / "config", Person())
    try:
        assert box.offered() == ()  # neither the proxy nor the name answers as a server
    finally:
        box.close()


@pytest.mark.parametrize("asked", [False, True])
def test_the_environment_proxy_is_used_only_when_the_entry_asks(
    asked: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "http://mcp.invalid/mcp"
    server = McpServer(
        "docs",
        url=url,
        allow_insecure_http=True,
        use_environment_proxy=asked,
        start_timeout_seconds=FAILURE_GUARD_SECONDS,
    )
    with recording_proxy() as (proxy, seen):
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.setenv("http_proxy", proxy)
        start(server, tmp_path)
        if not asked:  # nothing came: end the listener's wait with an empty connection
            host, port = proxy.removeprefix("http://").split(":")
            socket.create_connection((host, int(port))).close()

    assert seen[0].startswith(b"POST " + url.encode()) is asked

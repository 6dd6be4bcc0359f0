"""With only an endpoint set, the daemon asks the server for its own model, and what it says
names no model the person never set."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from counterfoil.settings.table import DEFAULT_MODEL

from .conftest import StartDaemon

pytest.importorskip("httpx")


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


def closed_port() -> int:
    """A port nothing listens on: bound, then let go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_unreachable_endpoint_with_no_model_set_names_no_model(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}/v1"
    daemon = await start_daemon({"endpoint": endpoint})

    result = await daemon.request("counterfoil/run", {"goal": "anything"})

    assert result["reason"] == "model_error"
    assert f"the served model at {endpoint}" in result["error"]
    assert "cannot connect to the model server" in result["error"]
    said = [result["error"], *(item["message"] for item in daemon.told("counterfoil/runActivity"))]
    assert not [line for line in said if DEFAULT_MODEL in line]


async def test_an_endpoint_with_a_model_set_names_it(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}/v1"
    daemon = await start_daemon({"endpoint": endpoint, "model": DEFAULT_MODEL})

    result = await daemon.request("counterfoil/run", {"goal": "anything"})

    assert result["reason"] == "model_error"
    assert f"{DEFAULT_MODEL} at {endpoint}" in result["error"]

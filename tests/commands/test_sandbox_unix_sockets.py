"""With the network off, a confined or reviewed command makes no Unix socket, so no service
listening on one acts for it, wherever its socket lives; its own socket pairs still work, and
its receipt says Unix sockets were denied."""

from __future__ import annotations

import json
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction
from counterfoil.commands.tree import socket_filter

PYTHON = sys.executable
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or shutil.which("bwrap") is None
    or socket_filter.program() is None,
    reason="the Unix socket filter is bubblewrap's, on x86_64, aarch64 or riscv64 Linux",
)
COMMAND = """
import os, socket
first, second = socket.socketpair()
first.sendall(b"pair")
print(second.recv(4).decode(), "works")
path = {path!r}
print("the service's socket is visible:", os.path.exists(path))
client = socket.socket(socket.AF_UNIX)
client.connect(path)
print("the service said", client.recv(16).decode())
"""


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Path]:
    """A service listening on a Unix socket outside the root, in a folder a confined command
    sees: a host folder outside the home, the temporary folders and Counterfoil's own, all of
    which the sandbox hides."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="counterfoil-socket-", dir="/var/lib"))
    except OSError as error:
        pytest.skip(f"no folder outside the hidden ones can be written here: {error}")
    path = folder / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(30)

    def answer() -> None:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        with connection:
            connection.sendall(b"acting for you")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        server.close()
        thread.join(5)
        shutil.rmtree(folder, ignore_errors=True)


def run_in(tmp_path: Path, mode: str, body: str, **policy: Any) -> tuple[str, dict[str, Any]]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "tool.py").write_text(body)
    log = tmp_path / "logs" / "receipts.jsonl"
    log.parent.mkdir(exist_ok=True)
    workspace = make_workspace(
        root,
        store=ReceiptStore(log, signer=None),
        answer=True,
        allowed_commands=((PYTHON, "tool.py"),),
        command_sandbox=mode,
        **policy,
    )
    observation = workspace.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    return observation, json.loads(log.read_text().splitlines()[-1])


@pytest.mark.parametrize("mode", ["confine", "review"])
def test_a_command_without_the_network_reaches_no_unix_socket_outside_the_root(
    tmp_path: Path, service: Path, mode: str
) -> None:
    observation, _ = run_in(tmp_path, mode, COMMAND.format(path=str(service)))

    assert observation.startswith("status: 1\noutput:\npair works\n")
    assert "the service's socket is visible: True" in observation
    assert "PermissionError: [Errno 13] Permission denied" in observation
    assert "acting for you" not in observation


def test_the_receipt_says_unix_sockets_were_denied(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()

    _, receipt = run_in(tmp_path, "confine", "")

    assert receipt["sandbox"] == {
        "mode": "confine",
        "mechanism": "bubblewrap",
        "network": False,
        "unix_sockets": False,
    }


def test_a_command_with_the_network_allowed_may_use_a_unix_socket(
    tmp_path: Path, service: Path
) -> None:
    observation, receipt = run_in(
        tmp_path, "confine", COMMAND.format(path=str(service)), allow_network=True
    )

    assert observation.endswith("the service said acting for you\n")
    assert receipt["sandbox"]["unix_sockets"] is True

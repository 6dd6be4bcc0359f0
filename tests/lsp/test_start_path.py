"""What the daemon loads before it answers `initialize`: the editor waits for that answer.

Only the transport and the server's shell are Counterfoil's part of that wait; the settings,
the protocol's shapes, the workspace and the session load after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROTOCOL = Path(__file__).resolve().parents[2] / "server" / "counterfoil" / "protocol"
# The transport, the server, and what registering one handler per method needs: the protocol's
# declarations (every message and the request table) and the tool table their checks read.
ANSWERING_INITIALIZE = {
    "counterfoil",
    "counterfoil.lsp",
    "counterfoil.lsp.framing",
    "counterfoil.lsp.params",
    "counterfoil.lsp.progress",
    "counterfoil.lsp.request_rules",
    "counterfoil.lsp.server",
    "counterfoil.lsp.transport",
    "counterfoil.openblas",  # standard library only: OpenBLAS preloaded by a re-exec, if any
    "counterfoil.protocol",
    "counterfoil.receipt_fields",  # standard library only: the receipt fields the wire declares
    *(f"counterfoil.protocol.{path.stem}" for path in PROTOCOL.glob("[!_]*.py")),
    "counterfoil.tools",
}


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_initialize_is_answered_with_only_the_transport_the_server_and_the_protocol_loaded(
    tmp_path: Path,
) -> None:
    pytest.importorskip("pygls")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "processId": None,
            "rootUri": tmp_path.as_uri(),
            "capabilities": {},
            "initializationOptions": {"allowWrites": True, "maxSteps": 5},
        },
    }
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        daemon = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "counterfoil", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    assert daemon.stdin is not None and daemon.stdout is not None
    answer = b""
    try:
        daemon.stdin.write(_frame(initialize))
        daemon.stdin.flush()
        while b'"capabilities"' not in answer:
            chunk = os.read(daemon.stdout.fileno(), 65536)
            if not chunk:
                break
            answer += chunk
        daemon.stdin.close()  # ends the daemon before it is sent anything else
        daemon.wait(timeout=60)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        daemon.stdout.close()
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
        if line.startswith("import time:")
    }

    assert b'"capabilities"' in answer
    assert {name for name in loaded if name.startswith("counterfoil")} == ANSWERING_INITIALIZE

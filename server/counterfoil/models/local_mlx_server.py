"""`python -m mlx_lm server` on a free loopback port, for tests and benchmarks of endpoints.

The project never serves models itself; this starts mlx-lm's own server (offline) so the
remote client can be measured and tested against a real one on this machine.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

START_SECONDS = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_mlx_server(
    model_dir: Path, log: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """The server process and its base URL, once it answers `/v1/models`.

    Its output goes to `log` (or nowhere); a server that exits or does not answer within
    `START_SECONDS` raises RuntimeError, with the end of the log when there is one.
    """
    port = free_port()
    output = subprocess.DEVNULL if log is None else log.open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlx_lm",
            "server",
            "--model",
            str(model_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=output,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = "" if log is None else log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"mlx_lm server exited: {said}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"mlx_lm server did not start within {START_SECONDS:.0f} s")

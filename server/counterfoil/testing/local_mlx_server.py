"""`python -m mlx_lm server` (or another model server) on a free loopback port, for tests and
benchmarks of endpoints.

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
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

START_SECONDS = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    argv: list[str], url: str, log: Path | None = None, name: str = "the model server"
) -> subprocess.Popen[bytes]:
    """Start `argv` (a server that will answer at `url`) and return it once `url/models`
    answers. Its output goes to `log` (or nowhere); a server that exits or does not answer
    within `START_SECONDS` raises RuntimeError, with the end of the log when there is one."""
    output = subprocess.DEVNULL if log is None else log.open("wb")
    process = subprocess.Popen(
        argv,
        stdout=output,
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = "" if log is None else log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{name} exited: {said}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"{name} did not start within {START_SECONDS:.0f} s")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Terminate, and kill what does not end within ten seconds."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def serving(argv: list[str], url: str, log: Path | None = None, name: str = "") -> Iterator[str]:
    """`url` while the server `argv` answers there; stopped on leaving."""
    process = start_server(argv, url, log, name or "the model server")
    try:
        yield url
    finally:
        stop_server(process)


def serving_mlx_model(model_dir: Path, log: Path | None = None) -> AbstractContextManager[str]:
    """The base URL of `python -m mlx_lm server` serving `model_dir` on a free port."""
    port = free_port()
    argv = [
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
    ]
    return serving(argv, f"http://127.0.0.1:{port}/v1", log, "mlx_lm server")


def main() -> None:
    """`python -m counterfoil.testing.local_mlx_server MODEL_DIR [LOG]`: serve, print the base
    URL once it answers, and stop the server on SIGTERM or SIGINT (for the editor's tests)."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("log", type=Path, nargs="?")
    arguments = parser.parse_args()

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    with serving_mlx_model(arguments.model_dir, arguments.log) as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

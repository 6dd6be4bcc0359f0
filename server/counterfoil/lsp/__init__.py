"""`counterfoil serve`: the language-server daemon the editor talks to over stdio.

It hosts one Workspace, its receipt log and the model loop for the first workspace folder;
the protocol is written down in docs/protocol.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import BinaryIO

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="counterfoil serve",
        description="Run the Counterfoil language-server daemon on stdin/stdout.",
    )
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="accepted for editors that pass it; stdio is the default",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("COUNTERFOIL_LOG_LEVEL", "INFO"),
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="how much to log on stderr (default INFO: one line per request)",
    )
    arguments, ignored = parser.parse_known_args(list(argv or ()))
    arguments.ignored = ignored
    return arguments


def _claim_stdout() -> BinaryIO:
    """Keep the real stdout for protocol messages and point fd 1 at stderr.

    A stray print from any library (or a model loader's progress bar) would otherwise corrupt
    the message stream.
    """
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol_out


def serve(argv: Sequence[str] | None = None) -> int:
    """Serve one client over stdio until it sends `exit` or closes stdin; returns the exit code.

    `argv` holds only the daemon's own options (none are required); unknown ones are ignored.
    """
    arguments = _parse_arguments(argv)
    logging.basicConfig(stream=sys.stderr, level=arguments.log_level, format=LOG_FORMAT)
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLogger().level))

    from .server import SHUTDOWN_WAIT_SECONDS, build_server
    from .transport import run_stdio

    protocol_out = _claim_stdout()
    server = build_server()
    logger = logging.getLogger("counterfoil.lsp")
    logger.info("serving on stdio (pid %d)", os.getpid())
    if arguments.ignored:
        logger.info("ignoring arguments %s", arguments.ignored)
    try:
        return run_stdio(
            server.protocol,
            sys.stdin.fileno(),
            protocol_out,
            server.channel.attach,
            server.interrupt_session,  # the editor went away: its run stays resumable
        )
    finally:
        server.close_session(SHUTDOWN_WAIT_SECONDS)


def main() -> None:
    raise SystemExit(serve(sys.argv[1:]))


__all__ = ["main", "serve"]

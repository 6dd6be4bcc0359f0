"""How a stdio MCP server is started: under the same sandbox as a confined command (bubblewrap
on Linux, sandbox-exec on macOS), always, whatever `commandSandbox` says, since a server runs
for the whole run and no one approves what it does between calls. It reads the system and the
project (read-only: it changes files only through the gate's own tools), writes only its private
temporary folder, cannot read the person's home or Counterfoil's configuration, has the network
only when its entry says so, and gets the core environment names plus those its entry passes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..commands.environment import command_environment
from ..commands.tree.reach import reach_for
from ..commands.tree.sandbox import (
    BUBBLEWRAP,
    CONFINE,
    SANDBOX_EXEC,
    Sandbox,
    sandbox_for,
    seatbelt_profile,
)
from ..errors import AgentError
from .servers import McpServer


@dataclass(frozen=True)
class Launch:
    """The argv (sandbox prefix and the server's command), environment and folder a stdio
    server starts with, and what its receipts say about the sandbox."""

    argv: tuple[str, ...]
    environment: dict[str, str]
    cwd: str
    sandbox: dict[str, Any]


def stdio_launch(
    server: McpServer,
    root: Path,
    *,
    hidden: tuple[Path, ...] = (),
    withheld: tuple[str, ...] = (),
    environment: Mapping[str, str] | None = None,
) -> Launch:
    """The confined start of `server`; AgentError (one sentence) when no sandbox can be had."""
    sandbox = _read_only(sandbox_for(CONFINE, root, network=server.network, hidden=hidden), root)
    names = command_environment(
        os.environ if environment is None else environment, server.pass_environment, withheld
    )
    return Launch(
        argv=(*sandbox.prefix, *server.command),
        environment={**names, **dict(sandbox.environment)},
        cwd=str(root),
        sandbox=sandbox.record().as_record(),
    )


def _read_only(sandbox: Sandbox, root: Path) -> Sandbox:
    """The command sandbox with nothing writable but the private temporary folder: bubblewrap's
    writable binds (the root, `.git`) made read-only, sandbox-exec's profile made without the
    root. Refused (never weaker) when the prefix is not the shape expected."""
    prefix = list(sandbox.prefix)
    if sandbox.mechanism == BUBBLEWRAP and "--bind" in prefix:
        prefix = ["--ro-bind" if item == "--bind" else item for item in prefix]
    elif sandbox.mechanism == SANDBOX_EXEC and "-p" in prefix:
        reach = reach_for(root, (), network=sandbox.network)
        prefix[prefix.index("-p") + 1] = seatbelt_profile((), reach, network=sandbox.network)
    else:
        raise AgentError(f"an MCP server cannot be confined with {sandbox.mechanism}")
    return Sandbox(
        sandbox.mode, sandbox.mechanism, sandbox.network, tuple(prefix), sandbox.environment
    )

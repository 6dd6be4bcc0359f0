"""The test MCP servers (`counterfoil/testing/mcp_servers.py`, written with the SDK's server
API) as the person would configure them, and a toolbox over them with its pins in `tmp_path`."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from counterfoil.mcp.pins import PinStore
from counterfoil.mcp.servers import McpServer
from counterfoil.mcp.toolbox import DefinitionQuestion, McpToolbox, ServerEvent

SERVER_FILE = Path(__file__).resolve().parents[2] / "server/counterfoil/testing/mcp_servers.py"


def stdio_server(
    folder: Path,
    *,
    name: str = "files",
    read_only: tuple[str, ...] = (),
    timeout: float = 20.0,
    pass_environment: tuple[str, ...] = (),
) -> McpServer:
    """The test server over stdio, serving `folder`."""
    return McpServer(
        name,
        command=(sys.executable, str(SERVER_FILE), str(folder)),
        read_only_tools=read_only,
        timeout_seconds=timeout,
        pass_environment=pass_environment,
    )


@contextmanager
def http_server(folder: Path, *, name: str = "web") -> Iterator[McpServer]:
    """The test server over streamable HTTP on a free port of 127.0.0.1, stopped after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(SERVER_FILE), str(folder), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield McpServer(name, url=f"http://127.0.0.1:{port}/mcp", timeout_seconds=20.0)
    finally:
        process.terminate()
        process.wait(10)


class Person:
    """Answers definition questions (`approve`) and records them and the servers' events."""

    def __init__(self, approve: bool = True) -> None:
        self.approve = approve
        self.questions: list[DefinitionQuestion] = []
        self.events: list[ServerEvent] = []

    def confirm(self, question: DefinitionQuestion) -> bool:
        self.questions.append(question)
        return self.approve


def toolbox(servers: tuple[McpServer, ...], root: Path, pins: Path, person: Person) -> McpToolbox:
    return McpToolbox(
        servers,
        PinStore(pins),
        root,
        confirm_definition=person.confirm,
        on_event=person.events.append,
    )


def approving(tools: set[str]) -> Callable[[DefinitionQuestion], bool]:
    """A person who approves only the named tools' definitions."""
    return lambda question: question.definition.name in tools


TINY_SERVER = """import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

NAME = {name}
SCHEMA = {{"type": "object"}}


async def list_tools(ctx, params):
    tool = types.Tool(name=NAME, description="A tool.", input_schema=SCHEMA)
    return types.ListToolsResult(tools=[tool])


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=NAME)])


async def main():
    server = Server("tiny", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""


def tiny_server(path: Path, name: str, *, prelude: str = "") -> Path:
    """A one-tool server's source at `path`: its tool is named by the Python expression
    `name`, evaluated after `prelude` when it starts (so the name can say what it found)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(prelude + TINY_SERVER.format(name=name), encoding="utf-8")
    return path

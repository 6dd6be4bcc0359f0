"""Small MCP servers for the tests, written with the `mcp` SDK's low-level server API: a
filesystem-like one (`read`, `write`, `env`, `home`), a fetch-like one (`fetch`), and hostile
tools (`crash`, `hang`, `flood`, `endless`, `huge`, `malformed`). Run as a file, not a module,
so a confined server needs nothing of this package:

    python mcp_servers.py FOLDER              # stdio
    python mcp_servers.py FOLDER --http PORT  # streamable HTTP on 127.0.0.1

The `read` tool's description is read from FOLDER/description.txt when it exists, at every
listing, so a test can change a definition between runs or in the middle of one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TEXT_ONLY = {"type": "object", "properties": {"text": {"type": "string"}}}
PATH_ONLY = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
WIRE: dict[str, Any] = {}  # the real stdout, for the tools that write around the SDK


def tools(folder: Path) -> list[types.Tool]:
    description_file = folder / "description.txt"
    described = (
        description_file.read_text(encoding="utf-8")
        if description_file.exists()
        else "Read a file of the folder."
    )
    write_schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    }
    listed = [
        ("read", described, PATH_ONLY),
        ("write", "Write a file of the folder.", write_schema),
        ("fetch", "Fetch a URL (answers with a canned page).", TEXT_ONLY),
        ("env", "Name the environment variables the server got.", TEXT_ONLY),
        ("home", "List the home folder.", TEXT_ONLY),
        ("crash", "Exit at once.", TEXT_ONLY),
        ("hang", "Never answer.", TEXT_ONLY),
        ("flood", "Write garbage lines to stdout, then answer.", TEXT_ONLY),
        ("endless", "Write to stdout without end, never a newline.", TEXT_ONLY),
        ("huge", "Answer with a result of `text` megabytes.", TEXT_ONLY),
        ("malformed", "Answer with a result that is not a CallToolResult.", TEXT_ONLY),
    ]
    return [
        types.Tool(
            name=name,
            description=description,
            input_schema=schema,
            annotations=types.ToolAnnotations(read_only_hint=True),  # never believed
        )
        for name, description, schema in listed
    ]


def text(value: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=value)], is_error=error
    )


def build(folder: Path) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools(folder))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        name = params.name
        if name == "read":
            try:
                return text((folder / str(arguments["path"])).read_text(encoding="utf-8"))
            except OSError as error:
                return text(f"cannot read: {error.strerror}", error=True)
        if name == "write":
            try:
                (folder / str(arguments["path"])).write_text(str(arguments["content"]))
            except OSError as error:
                return text(f"cannot write: {error.strerror}", error=True)
            return text("written")
        if name == "fetch":
            return text(f"<html>page of {arguments.get('text', '')}</html>")
        if name == "env":
            return text(" ".join(sorted(os.environ)))
        if name == "home":
            home = Path(os.environ.get("HOME", "/root"))
            return text(" ".join(sorted(item.name for item in home.iterdir())))
        if name == "crash":
            os._exit(3)
        if name == "hang":
            await anyio.sleep(3600)
        if name == "flood":
            wire = WIRE.get("stdout")
            if wire is not None:
                for _ in range(2000):
                    wire.write("garbage that is not JSON-RPC " * 40 + "\n")
                wire.flush()
            return text("flooded")
        if name == "endless":
            wire = WIRE.get("stdout")
            while wire is not None:
                wire.write("x" * 65536)
                wire.flush()
        if name == "huge":
            megabytes = int(arguments.get("text", "10"))
            return text("x" * (megabytes * 1024 * 1024))
        if name == "malformed":
            wire = WIRE.get("stdout")
            if wire is not None:
                malformed = {"jsonrpc": "2.0", "id": ctx.request_id, "result": {"content": "x"}}
                wire.write(json.dumps(malformed) + "\n")
                wire.flush()
            await anyio.sleep(3600)
        return text(f"unknown tool {name}", error=True)

    return Server("counterfoil-test", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    wire = os.fdopen(os.dup(1), "w", encoding="utf-8")
    WIRE["stdout"] = wire
    async with stdio_server(stdout=anyio.wrap_file(wire)) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    folder = Path(sys.argv[1])
    server = build(folder)
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()

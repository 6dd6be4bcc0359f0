"""One live connection to one MCP server, spoken with the official `mcp` SDK: the only module
that imports it, and only when a server is started, so the core and both front ends load
without it.

The SDK is asynchronous and the gate is not: each connection runs its own event loop on a
thread, holds the session open there (the SDK's context managers enter and exit in one task),
and the gate's calls wait on it with a time limit. A server that dies, hangs or answers
something malformed becomes one `McpFailure` sentence; nothing waits forever."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..url_rules import UrlRefused, environment_proxy
from .definitions import ToolDefinition
from .launch import Launch
from .servers import McpServer

if TYPE_CHECKING:
    from mcp import ClientSession

T = TypeVar("T")
STOP_SECONDS = 10.0  # the SDK ends a stdio server in at most about 5 s (close, TERM, KILL)
STDERR_KEPT = 4096  # the first bytes a server (or its sandbox) writes to stderr, to say why
HTTP_SECONDS, HTTP_READ_SECONDS = 30.0, 300.0  # the SDK's own client's (a stream stays open)
MAX_TOOLS = 512  # a longer list is refused, not offered in part
MAX_LIST_PAGES = 16


class McpFailure(Exception):
    """A server that could not be started, stopped, timed out or answered malformed: one
    sentence, which the gate shows as the call's observation."""


class McpStartFailure(McpFailure):
    """A server that ended before its session opened (its program, or its sandbox, gave up)."""


@dataclass(frozen=True)
class CallReply:
    """A `tools/call` result as JSON values (`result`: the whole CallToolResult, as the SDK
    validated it) and whether the server called it an error."""

    result: dict[str, Any]
    is_error: bool


class Connection(Protocol):
    """What the toolbox needs of a started server (a test may give its own)."""

    def list_tools(self) -> tuple[ToolDefinition, ...]: ...

    def call_tool(self, name: str, arguments: dict[str, Any]) -> CallReply: ...

    def close(self) -> None: ...


def connect(server: McpServer, launch: Launch | None) -> Connection:
    """Start `server` (stdio: with `launch`, its confined argv) and open its session."""
    try:
        import mcp  # noqa: F401 - only whether the SDK is installed
    except ImportError:
        raise McpFailure(
            f"MCP server {server.name} needs the mcp extra: pip install 'counterfoil[mcp]'"
        ) from None
    proxy = None
    if server.url is not None:
        try:
            proxy = environment_proxy(
                server.url, use_environment_proxy=server.use_environment_proxy
            )
        except UrlRefused as error:
            raise McpFailure(f"MCP server {server.name} was not started: {error}") from None
    connection = SdkConnection(server, launch, proxy)
    connection.start()
    return connection


class SdkConnection:
    """A session with one server, held open on its own event loop until `close`."""

    def __init__(self, server: McpServer, launch: Launch | None, proxy: str | None = None) -> None:
        self.server = server
        self.launch = launch
        self.proxy = proxy
        self.timeout = server.timeout_seconds
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"mcp-{server.name}", daemon=True
        )
        self._session: ClientSession | None = None
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._held: concurrent.futures.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ended = threading.Event()  # the held session is over, the server stopped
        self._stderr = StderrHead()

    def start(self) -> None:
        _quiet_sdk_logs()
        self._thread.start()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        start = self.server.start_timeout_seconds
        done, _ = concurrent.futures.wait(
            (self._ready, self._held), start, concurrent.futures.FIRST_COMPLETED
        )
        if self._ready in done and self._ready.exception() is None:
            return
        if done:  # give the session's end a moment to say why
            concurrent.futures.wait((self._held,), 1.0)
        why = self._ended_why() if done else f"did not start within {start:g} s"
        self.close()
        self._stderr.wait(STOP_SECONDS)  # the server is stopped: its stderr ends at once
        said = self._stderr.last_line()  # the sandbox's own words (bwrap: "No such file …")
        if not done:
            raise McpFailure(f"MCP server {self.server.name} {why}")
        if said:
            why = f"could not start: {said}"
        raise McpStartFailure(f"MCP server {self.server.name} {why}")

    async def _hold(self) -> None:
        from contextlib import AsyncExitStack

        from mcp import ClientSession

        self._stop = asyncio.Event()
        try:
            async with AsyncExitStack() as stack:
                if self.launch is not None:
                    streams = await stack.enter_async_context(self._stdio(self.launch))
                else:
                    client = await stack.enter_async_context(self._http_client())
                    streams = await stack.enter_async_context(self._http(client))
                session = await stack.enter_async_context(ClientSession(*streams))
                await session.initialize()
                self._session = session
                self._ready.set_result(None)
                await self._stop.wait()
        finally:
            self._ended.set()
            if not self._ready.done():
                self._ready.set_exception(McpFailure("ended before its session opened"))

    def _stdio(self, launch: Launch) -> Any:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(
            command=launch.argv[0],
            args=list(launch.argv[1:]),
            env=launch.environment,
            cwd=launch.cwd,
            encoding_error_handler="replace",
        )
        # Only the start of what the server writes to stderr is kept: a flood costs nothing.
        return stdio_client(parameters, errlog=self._stderr.file)

    def _http_client(self) -> Any:
        """As the model endpoint's: nothing from the environment (proxy, netrc) but the proxy
        the person asked for."""
        import httpx2

        timeout = httpx2.Timeout(HTTP_SECONDS, read=HTTP_READ_SECONDS)
        return httpx2.AsyncClient(timeout=timeout, trust_env=False, proxy=self.proxy)

    def _http(self, client: Any) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        assert self.server.url is not None
        return streamable_http_client(self.server.url, http_client=client)

    def _ended_why(self) -> str:
        """Why the held session ended, in a few words."""
        assert self._held is not None
        error = self._held.exception() if self._held.done() else None
        if error is None:
            return "stopped"
        return f"stopped: {_sentence(error)}"

    def _wait(self, work: Coroutine[Any, Any, T], what: str) -> T:
        """The result of `work` on the session's loop, or McpFailure when the server ends or
        the time limit passes first (the request is then cancelled)."""
        assert self._held is not None
        if self._held.done():
            work.close()
            raise McpFailure(f"MCP server {self.server.name} {self._ended_why()}")
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        either: tuple[concurrent.futures.Future[Any], ...] = (future, self._held)
        done, _ = concurrent.futures.wait(either, self.timeout, concurrent.futures.FIRST_COMPLETED)
        if future in done:
            error = future.exception()
            if error is None:
                return future.result()
            raise McpFailure(f"MCP server {self.server.name}: {what} failed: {_sentence(error)}")
        future.cancel()
        if self._held in done:
            raise McpFailure(f"MCP server {self.server.name} {self._ended_why()} during {what}")
        raise McpFailure(
            f"MCP server {self.server.name} did not answer {what} within {self.timeout:g} s"
        )

    def list_tools(self) -> tuple[ToolDefinition, ...]:
        return self._wait(self._list_tools(), "tools/list")

    async def _list_tools(self) -> tuple[ToolDefinition, ...]:
        from mcp.types import PaginatedRequestParams

        assert self._session is not None
        found: list[ToolDefinition] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
            page = await self._session.list_tools(params=params)
            for tool in page.tools:
                found.append(
                    ToolDefinition(
                        self.server.name, tool.name, tool.description or "", tool.input_schema
                    )
                )
            if len(found) > MAX_TOOLS:
                raise McpFailure(f"listed more than {MAX_TOOLS} tools")
            cursor = page.next_cursor
            if cursor is None:
                return tuple(found)
        raise McpFailure(f"listed more than {MAX_LIST_PAGES} pages of tools")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> CallReply:
        return self._wait(self._call_tool(name, arguments), f"the call of {name}")

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> CallReply:
        assert self._session is not None
        result = await self._session.call_tool(name, arguments)
        dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return CallReply(dumped, bool(result.is_error))

    def close(self) -> None:
        """End the session and the server (the SDK stops a stdio server: stdin closed, then
        TERM, then KILL), then the loop. A session that does not end when asked (its start
        hangs) is cancelled, and its end still waited for, so no server outlives the run."""
        held = self._held
        if held is not None and not held.done():
            stop = self._stop
            if stop is not None and self._session is not None:  # it waits to be asked
                self._loop.call_soon_threadsafe(stop.set)
                self._ended.wait(STOP_SECONDS)
            if not self._ended.is_set():
                held.cancel()
                self._ended.wait(STOP_SECONDS)
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(STOP_SECONDS)
        self._stderr.close()
        if self.launch is not None and self.launch.temporary is not None:
            shutil.rmtree(self.launch.temporary, ignore_errors=True)


class StderrHead:
    """A server's stderr: a pipe whose first `STDERR_KEPT` bytes are kept, the rest read and
    dropped on a thread of its own, so a server that floods it is never blocked by it."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self.file = os.fdopen(write, "w")
        self._kept = bytearray()
        self._reader = threading.Thread(
            target=self._drain, args=(read,), name="mcp-stderr", daemon=True
        )
        self._reader.start()

    def _drain(self, read: int) -> None:
        try:
            while chunk := os.read(read, 65536):
                room = STDERR_KEPT - len(self._kept)
                if room > 0:
                    self._kept += chunk[:room]
        finally:
            os.close(read)

    def last_line(self) -> str:
        """The last line kept, printable, at most 300 characters ("" when nothing came)."""
        lines = [line.strip() for line in self._kept.decode("utf-8", "replace").splitlines()]
        said = next((line for line in reversed(lines) if line), "")
        return "".join(char if char.isprintable() else "?" for char in said)[:300]

    def wait(self, seconds: float) -> None:
        """Until every end is closed and all was read (`seconds`: a guard, not a pace)."""
        self._reader.join(seconds)

    def close(self) -> None:
        """Close this end; the thread ends once the server's ends are closed too."""
        self.file.close()


def _quiet_sdk_logs() -> None:
    """The SDK logs each line a server writes that is not JSON-RPC, with a traceback; a server
    that floods its output would flood the person's terminal. Its failures reach the gate as
    exceptions instead."""
    import logging

    logger = logging.getLogger("mcp")
    if logger.propagate:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _sentence(error: BaseException) -> str:
    """One line for an error the SDK or a task group raised (the first of a group)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return first[:300]

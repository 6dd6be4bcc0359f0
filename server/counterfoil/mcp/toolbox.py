"""The MCP tools of one run: the person's servers, started when the run first needs their
tools (each start an event), their definitions checked against the pins (a new or changed one is
asked about, and offered only when approved), each call checked again against what was
approved, and every server stopped when the run ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import AgentError
from ..receipts import canonical_json
from .connection import CallReply, Connection, McpFailure, McpStartFailure
from .definitions import ToolDefinition
from .launch import Launch, stdio_launch
from .pins import PinCheck, PinStore
from .servers import TOOL_NAME, McpServer

Connect = Callable[[McpServer, Launch | None], Connection]


@dataclass(frozen=True)
class OfferedTool:
    """A tool the model is offered: an approved definition, and whether the person marked it
    read-only (its calls are then not asked about)."""

    server: McpServer
    definition: ToolDefinition

    @property
    def read_only(self) -> bool:
        return self.definition.name in self.server.read_only_tools

    def listing(self) -> dict[str, Any]:
        """How the system prompt lists it."""
        return {
            "server": self.server.name,
            "name": self.definition.name,
            "description": self.definition.description,
            "input_schema": self.definition.input_schema,
        }


@dataclass(frozen=True)
class DefinitionQuestion:
    """A definition the person is asked to approve: never seen (`check.state == "new"`) or
    changed since approved (`check.changes` names what changed, `check.approved` is the old)."""

    server: McpServer
    definition: ToolDefinition
    check: PinCheck


@dataclass(frozen=True)
class ServerEvent:
    """What the run shows of a server: `started` (with its sandbox), `not started`,
    `stopped`, a tool `withheld` (not approved, or not fit to ask about) or an approval `not
    pinned` (it holds for this run only), and one sentence."""

    server: str
    state: Literal["started", "not started", "stopped", "withheld", "not pinned"]
    sentence: str
    sandbox: dict[str, Any] | None = None

    def line(self) -> str:
        """The event in one line, as the terminal prints it and the daemon logs it."""
        how = ""
        if self.sandbox is not None:
            network = "network" if self.sandbox.get("network") else "no network"
            how = f" (confined: {self.sandbox.get('mechanism')}, read-only project, {network})"
        return f"[mcp] {self.state}: {self.sentence}{how}"


ConfirmDefinition = Callable[[DefinitionQuestion], bool]
MAX_DESCRIPTION_CHARS = 4096
MAX_SCHEMA_CHARS = 16384


def unfit_definition(definition: ToolDefinition) -> str | None:
    """Why a definition is not even asked about: a name that is not plain (it is printed and
    put in the prompt as it is), or a description or schema too long to read in a question."""
    label = f"MCP server {definition.server}"
    if not TOOL_NAME.fullmatch(definition.name):
        return f"{label} offers a tool whose name is not plain; it is not offered"
    if len(definition.description) > MAX_DESCRIPTION_CHARS:
        return (
            f"{label}: {definition.name}'s description is over {MAX_DESCRIPTION_CHARS} "
            "characters; it is not offered"
        )
    if len(canonical_json(definition.input_schema)) > MAX_SCHEMA_CHARS:
        return (
            f"{label}: {definition.name}'s input schema is over {MAX_SCHEMA_CHARS} "
            "characters; it is not offered"
        )
    return None


def _what_it_reads(launch: Launch | None) -> str:
    """What a confined server that did not start could read, and what to do about it."""
    if launch is None:
        return ""
    shown = ", ".join(launch.shown) or "nothing more"
    return (
        "; confined, it reads the system's folders, the project and "
        f"{shown} (not your home folder or /tmp): install its interpreter and "
        "what it imports outside those, or name them by absolute path in its command"
    )


def _sdk_connect(server: McpServer, launch: Launch | None) -> Connection:
    from .connection import connect

    return connect(server, launch)


class McpToolbox:
    """The servers of one run and the tools they offer it."""

    def __init__(
        self,
        servers: tuple[McpServer, ...],
        pins: PinStore,
        root: Path,
        *,
        hidden: tuple[Path, ...] = (),
        withheld_environment: tuple[str, ...] = (),
        confirm_definition: ConfirmDefinition | None = None,
        on_event: Callable[[ServerEvent], None] | None = None,
        connect: Connect = _sdk_connect,
    ) -> None:
        self.servers = servers
        self.pins = pins
        self.root = root
        self.hidden = hidden
        self.withheld_environment = withheld_environment
        self.confirm_definition = confirm_definition
        self.on_event = on_event
        self._connect = connect
        self._connections: dict[str, Connection | McpFailure] = {}
        self._executables: dict[str, dict[str, str]] = {}  # each stdio server's program
        self._offered: tuple[OfferedTool, ...] | None = None

    def _show(self, event: ServerEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def connection(self, server: McpServer) -> Connection:
        """The server's connection, started on first use; McpFailure when it cannot be had."""
        known = self._connections.get(server.name)
        if isinstance(known, McpFailure):
            raise known
        if known is not None:
            return known
        sandbox: dict[str, Any] | None = None
        launch = None
        try:
            if server.url is None:
                launch = stdio_launch(
                    server, self.root, hidden=self.hidden, withheld=self.withheld_environment
                )
                sandbox = launch.sandbox
                self._executables[server.name] = launch.executable
            connection = self._connect(server, launch)
        except (AgentError, McpFailure, OSError) as error:
            failure = McpFailure(f"MCP server {server.name} was not started: {error}")
            if isinstance(error, McpStartFailure):
                failure = McpFailure(f"{error}{_what_it_reads(launch)}")
            elif isinstance(error, McpFailure):
                failure = error
            self._connections[server.name] = failure
            self._show(ServerEvent(server.name, "not started", str(failure)))
            raise failure from None
        self._connections[server.name] = connection
        where = server.url or " ".join(server.command)
        self._show(
            ServerEvent(server.name, "started", f"MCP server {server.name}: {where}", sandbox)
        )
        return connection

    def offered(self) -> tuple[OfferedTool, ...]:
        """The approved tools of every server (asked once per run): each server started, its
        list read, each definition not pinned as it is now asked about."""
        if self._offered is None:
            found: list[OfferedTool] = []
            for server in self.servers:
                try:
                    definitions = self.connection(server).list_tools()
                except McpFailure as error:
                    self._fail(server, error)
                    continue
                found.extend(
                    OfferedTool(server, definition)
                    for definition in definitions
                    if self._approved(server, definition)
                )
            self._offered = tuple(found)
        return self._offered

    def _fail(self, server: McpServer, error: McpFailure) -> None:
        """A server that failed is not used again this run."""
        known = self._connections.get(server.name)
        self._connections[server.name] = error
        if known is not None and not isinstance(known, McpFailure):
            known.close()
            self._show(ServerEvent(server.name, "stopped", str(error)))

    def _approved(self, server: McpServer, definition: ToolDefinition) -> bool:
        unfit = unfit_definition(definition)
        if unfit is not None:
            self._show(ServerEvent(server.name, "withheld", unfit))
            return False
        executable = self._executables.get(server.name)
        check = self.pins.check(server, definition, executable)
        if check.state == "pinned":
            return True
        question = DefinitionQuestion(server, definition, check)
        if self.confirm_definition is not None and self.confirm_definition(question) is True:
            try:
                self.pins.pin(server, definition, executable)
            except OSError as error:  # approved all the same, for this run only
                self._show(
                    ServerEvent(
                        server.name,
                        "not pinned",
                        f"the approval of {server.name}/{definition.name} holds for this run "
                        f"only: {self.pins.path} could not be written ({error.strerror})",
                    )
                )
            return True
        self._show(
            ServerEvent(
                server.name,
                "withheld",
                f"MCP tool {server.name}/{definition.name} is not offered: its "
                f"{'changed ' if check.state == 'changed' else ''}definition was not approved",
            )
        )
        return False

    def failure(self, server: str) -> str | None:
        """Why the named server is not used this run (it did not start, or it failed), said
        again to the run that calls one of its tools; None when it is not known to fail."""
        known = self._connections.get(server)
        return str(known) if isinstance(known, McpFailure) else None

    def find(self, server: str, name: str) -> OfferedTool | None:
        return next(
            (
                tool
                for tool in self.offered()
                if tool.server.name == server and tool.definition.name == name
            ),
            None,
        )

    def current(self, tool: OfferedTool) -> None:
        """Raise McpFailure unless the server still defines `tool` exactly as approved (a list
        changed mid-run is never called on the strength of the earlier approval)."""
        try:
            definitions = self.connection(tool.server).list_tools()
        except McpFailure as error:
            self._fail(tool.server, error)
            raise
        now = next((item for item in definitions if item.name == tool.definition.name), None)
        label = f"{tool.server.name}/{tool.definition.name}"
        if now is None:
            raise McpFailure(f"MCP server {tool.server.name} no longer offers {label}")
        if now.sha256 != tool.definition.sha256:
            changes = ", ".join(
                name.replace("_", " ")
                for name in ("description", "input_schema")
                if now.pinned_fields()[name] != tool.definition.pinned_fields()[name]
            )
            raise McpFailure(
                f"the definition of {label} changed since it was approved ({changes} changed); "
                "it was not called, and the next run asks about it again"
            )

    def call(self, tool: OfferedTool, arguments: dict[str, Any]) -> CallReply:
        """Call `tool`; McpFailure when the server fails (it is then stopped for the run)."""
        try:
            return self.connection(tool.server).call_tool(tool.definition.name, arguments)
        except McpFailure as error:
            self._fail(tool.server, error)
            raise

    def close(self) -> None:
        """Stop every server this run started."""
        for name, connection in list(self._connections.items()):
            if not isinstance(connection, McpFailure):
                connection.close()
                self._show(ServerEvent(name, "stopped", f"MCP server {name} stopped"))
        self._connections.clear()


def offered_listings(workspace: object) -> list[dict[str, Any]] | None:
    """The approved MCP tools of a workspace's run, as the prompt lists them and a constrained
    model spells them; None for a run without MCP servers (or a gate that has none)."""
    toolbox = getattr(workspace, "mcp_toolbox", None)
    if not isinstance(toolbox, McpToolbox):
        return None
    return [offered.listing() for offered in toolbox.offered()]

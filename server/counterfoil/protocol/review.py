"""The edit preview (LSP's own WorkspaceEdit shapes) and the confirm request, server to client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .wire import SOMETIMES


@dataclass(frozen=True, kw_only=True)
class Position:
    line: int
    character: int  # UTF-16 code units, as LSP counts them


@dataclass(frozen=True, kw_only=True)
class Range:
    start: Position
    end: Position


@dataclass(frozen=True, kw_only=True)
class TextEdit:
    range: Range
    newText: str


@dataclass(frozen=True, kw_only=True)
class VersionedDocument:
    uri: str
    version: int | None = None


@dataclass(frozen=True, kw_only=True)
class TextDocumentEdit:
    textDocument: VersionedDocument
    edits: list[TextEdit]


@dataclass(frozen=True, kw_only=True)
class CreateFile:
    kind: Literal["create"] = "create"
    uri: str


@dataclass(frozen=True, kw_only=True)
class WorkspaceEdit:
    documentChanges: list[TextDocumentEdit | CreateFile]


@dataclass(frozen=True, kw_only=True)
class EditPreview:
    """The whole proposed file, and the same change as an LSP WorkspaceEdit whose edits,
    applied to `baseText`, give exactly the bytes of `proposedSha256`."""

    kind: Literal["edit"] = "edit"
    path: str
    uri: str
    removesFile: bool
    baseSha256: str | None  # null for a new file, which must not exist
    proposedSha256: str | None  # null when the file is removed
    proposedText: str | None
    baseText: str | None
    edit: WorkspaceEdit | None
    reverts: str | None = field(
        default=None, metadata=SOMETIMES
    )  # the call whose effect this undoes
    # Folders the write creates (outermost first), or a revert removes when left empty.
    newFolders: list[str] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class CommandRunsAs:
    """How a command will run: `mode` (`off`, `confine`, `review`), the `mechanism` that
    confines it (`none` when off), and whether it has the network."""

    mode: str
    mechanism: str
    network: bool


@dataclass(frozen=True, kw_only=True)
class CommandPreview:
    kind: Literal["command"] = "command"
    argv: list[str]
    cwd: str
    timeoutSeconds: float
    # How it will run, said before it is approved: the sandbox's mode, mechanism and network.
    runsAs: CommandRunsAs | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class ChangedFile:
    path: str
    uri: str
    expectedSha256: str | None
    contentSha256: str | None
    removesFile: bool
    currentText: str | None
    proposedText: str | None
    mode: int | None  # the permission bits it gets (null: removed, or the usual)
    currentMode: int | None  # its bits now (null: absent or unread)
    changesMode: bool  # the bits change (a new file's: they are not 0644); always shown
    # A revert's file that a folder replaced: the folders removed first (each when empty).
    madeFolders: list[str] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class LeftAlone:
    path: str
    why: str


@dataclass(frozen=True, kw_only=True)
class CommandRan(CommandRunsAs):
    """How a reviewed command ran: its sandbox (as its receipt records it), its argv and how it
    ended."""

    argv: list[str]
    exitStatus: int | None  # null after a timeout or a stop
    timedOut: bool


@dataclass(frozen=True, kw_only=True)
class ChangeSetPreview:
    """A command's reviewed changes to the tree, or a command's revert, accepted as a whole."""

    kind: Literal["changes"] = "changes"
    reverts: str | None
    files: list[ChangedFile]
    leftAlone: list[LeftAlone]
    ran: CommandRan | None = field(default=None, metadata=SOMETIMES)  # review mode only


@dataclass(frozen=True, kw_only=True)
class McpServerShown:
    """An MCP server as its pins and receipts name it: its name and how it is reached (the
    argv of a stdio server, the URL of one over HTTP)."""

    name: str
    transport: Literal["stdio", "http"]
    command: list[str] | None = field(default=None, metadata=SOMETIMES)
    url: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class McpDefinitionPreview:
    """An MCP tool's definition, asked about before the model is offered it: never approved
    (`new`), or `changed` since approved (`changes` names the fields that differ, and the
    approved description and schema are sent beside the new ones). A Yes pins `sha256`."""

    kind: Literal["mcp_definition"] = "mcp_definition"
    server: McpServerShown
    tool: str
    description: str
    inputSchema: dict[str, Any]
    sha256: str
    state: Literal["new", "changed"]
    changes: list[str]
    approvedDescription: str | None = field(default=None, metadata=SOMETIMES)
    approvedInputSchema: dict[str, Any] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class McpCallPreview:
    """One MCP call, exactly as it will be made: the server, the tool, the approved
    definition's digest and the arguments sent."""

    kind: Literal["mcp_call"] = "mcp_call"
    server: McpServerShown
    tool: str
    description: str
    definitionSha256: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ConfirmParams:
    toolCallId: str
    tool: str
    arguments: dict[str, Any]
    preview: EditPreview | CommandPreview | ChangeSetPreview | McpDefinitionPreview | McpCallPreview
    # For the person, when the question reads differently than it looks: a proposal asked again
    # on a steered resume was made before the model read the person's message.
    note: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class ConfirmResult:
    """Only `approved: true` approves. `text`: the file the person approved instead of the
    proposal; `reason`: why the person said No, for the model."""

    approved: bool
    text: str | None = field(default=None, metadata=SOMETIMES)
    reason: str | None = field(default=None, metadata=SOMETIMES)
    # With a No: the person edited the proposal, and the model is asked to propose again.
    repropose: bool | None = field(default=None, metadata=SOMETIMES)
    # With a No that the person did not type: the file changed while the proposal waited
    # (stale), or its diff was closed unanswered (closed). The run's record says which.
    cause: Literal["stale", "closed"] | None = field(default=None, metadata=SOMETIMES)

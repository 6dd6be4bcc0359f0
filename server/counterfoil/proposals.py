"""What a person is asked to approve: the exact bytes of an edit, or the exact argv of a command.

A proposal is one of two shapes, told apart by `kind` (or `isinstance`): every field of each
is always set, so no reader checks for fields that belong to the other.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .actions import ToolAction


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class EditProposal:
    """Replace (or create) the file at `path` with exactly `proposed_text`.

    `base_text`/`base_sha256` are the bytes the model read, None for a new file; the write
    happens only if the disk still holds them.
    """

    tool_call_id: str
    action: ToolAction
    path: str
    base_text: str | None
    base_sha256: str | None
    proposed_text: str
    proposed_sha256: str
    reverts: str | None = None  # the call id whose effect this puts back
    removes_file: bool = False  # a revert of an effect that created its file
    # Folders the write creates first (outermost first), or a revert removes when still empty.
    new_folders: tuple[str, ...] = ()
    # The line of the file through which the model's `old` was read, its `new` text having run
    # on past `old` and rejoined the file there (`gate/edit_rejoin.py`); None: as written.
    rejoined_through: int | None = None
    kind: Literal["edit"] = field(default="edit", init=False)

    @property
    def creates_file(self) -> bool:
        return self.base_sha256 is None


@dataclass(frozen=True)
class CommandRunsAs:
    """How a command will run, said before it is approved: its sandbox `mode` (`off`,
    `confine`, `review`), the `mechanism` that confines it, and whether it has the network."""

    mode: str
    mechanism: str
    network: bool


@dataclass(frozen=True)
class CommandProposal:
    """Run exactly `argv` in `cwd` (the root), stopped after `timeout_seconds`, as `runs_as`
    says (None: not said)."""

    tool_call_id: str
    action: ToolAction
    argv: tuple[str, ...]
    cwd: str
    timeout_seconds: float
    kind: Literal["command"] = field(default="command", init=False)
    runs_as: CommandRunsAs | None = None


PLAIN_FILE_MODE = 0o644


@dataclass(frozen=True)
class FileRestore:
    """One file of a change set: it must hold `expected_sha256` now (None: absent), and gets
    `content` (None: it is removed) with permission bits `mode` (None: the usual)."""

    path: str
    expected_sha256: str | None
    content: bytes | None
    content_sha256: str | None
    mode: int | None
    current: bytes | None = None  # what is there now, for the diff (None: absent or unread)
    current_mode: int | None = None  # its permission bits now (None: absent or unread)
    # The folders a command made at this path and under it, deepest first: a revert removes
    # them (each only when empty) before it puts the file back.
    made_folders: tuple[str, ...] = ()

    @property
    def changes_mode(self) -> bool:
        """Whether applying it changes the permission bits: a kept file's bits differ, or a new
        file's are not the plain 0644 (a removed file's go with it)."""
        if self.content is None or self.mode is None:
            return False
        was = PLAIN_FILE_MODE if self.expected_sha256 is None else self.current_mode
        return was != self.mode


@dataclass(frozen=True)
class CommandRan:
    """How a reviewed command ran, shown beside its changes before they are accepted."""

    argv: tuple[str, ...]
    exit_status: int | None  # None after a timeout or a stop
    timed_out: bool
    mode: str  # the sandbox's mode and mechanism, as its receipt records them
    mechanism: str
    network: bool


@dataclass(frozen=True)
class ChangeSetProposal:
    """Put several files in the given states at once (a command's revert, a reviewed command's
    changes); `left_alone` names the paths it will not touch, and why."""

    tool_call_id: str
    action: ToolAction
    files: tuple[FileRestore, ...]
    left_alone: tuple[tuple[str, str], ...] = ()
    reverts: str | None = None
    ran: CommandRan | None = None  # a reviewed command's changes: how it ran
    kind: Literal["changes"] = field(default="changes", init=False)


ToolProposal: TypeAlias = EditProposal | CommandProposal | ChangeSetProposal


@dataclass(frozen=True)
class McpProposal:
    """Call `tool` of the MCP server `server` (its identity: name and how it is reached) with
    exactly `arguments`, under the definition whose digest the person approved; `read_only`:
    the person marked the tool as only reading, so the call is not asked about. Not one of the
    `ToolProposal` shapes: it has its own question (`Workspace.confirm_mcp`)."""

    tool_call_id: str
    action: ToolAction
    server: dict[str, object]
    tool: str
    description: str
    definition_sha256: str
    arguments: dict[str, object]
    read_only: bool
    kind: Literal["mcp"] = field(default="mcp", init=False)

    @property
    def shown(self) -> dict[str, object]:
        """What the person is shown and approves, as its digest is taken."""
        return {
            "server": self.server,
            "tool": self.tool,
            "definition_sha256": self.definition_sha256,
            "arguments": self.arguments,
        }

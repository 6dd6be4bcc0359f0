"""The definitions a person approved, kept outside every project folder (beside the
installation's secret and signing key), keyed by the server's identity and the tool's name: a
repository can neither add a pin nor see one, and a server reached another way starts unpinned.

Trust on first use, as the tool-poisoning advisories recommend: a definition is offered to the
model only while its digest is the one approved; a changed one is asked about again, with what
changed. A stdio server's pin also covers the program that was started (its path and SHA-256):
when another program answers under the same command (an upgrade, or a file replaced), each of
its definitions is asked about again, a tool marked read-only included."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..receipt_evidence import utc_now
from ..receipts.signing import config_dir
from .definitions import ToolDefinition, changed_fields
from .servers import McpServer

PIN_FILE = "mcp-pins.json"
PinState = Literal["pinned", "new", "changed"]


@dataclass(frozen=True)
class PinCheck:
    """How a definition stands against its pin: `pinned` (the approved digest), `new` (never
    approved) or `changed` (`changes` names the fields that differ from the approved one)."""

    state: PinState
    changes: tuple[str, ...] = ()
    approved: dict[str, Any] | None = None  # the approved definition's fields, when changed


class PinStore:
    """`mcp-pins.json` in the configuration folder (or `folder`); written whole, atomically."""

    def __init__(self, folder: Path | None = None) -> None:
        self.path = (folder or config_dir()) / PIN_FILE

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable: every definition is asked about again, none is trusted
        pins = data.get("pins") if isinstance(data, dict) else None
        return pins if isinstance(pins, dict) else {}

    @staticmethod
    def key(server: McpServer, tool: str) -> str:
        return f"{server.identity_sha256}/{tool}"

    def check(
        self,
        server: McpServer,
        definition: ToolDefinition,
        executable: dict[str, str] | None = None,
    ) -> PinCheck:
        """How `definition` stands; `executable` (a stdio server's program: path and SHA-256)
        must be the approved one too, else `executable` is among the changes."""
        pin = self._load().get(self.key(server, definition.name))
        if not isinstance(pin, dict) or not isinstance(pin.get("definition"), dict):
            return PinCheck("new")
        approved: dict[str, Any] = pin["definition"]
        changes = changed_fields(approved, definition)
        if executable is not None and pin.get("executable") != executable:
            changes = (*changes, "executable")
        if pin.get("sha256") == definition.sha256 and not changes:
            return PinCheck("pinned")
        return PinCheck("changed", changes, approved)

    def pin(
        self,
        server: McpServer,
        definition: ToolDefinition,
        executable: dict[str, str] | None = None,
    ) -> None:
        """Record `definition` as approved for `server` (replacing an earlier approval), with
        the program that served it (`executable`) when it is a stdio server."""
        pins = self._load()
        entry: dict[str, Any] = {
            "server": server.identity(),
            "sha256": definition.sha256,
            "definition": definition.pinned_fields(),
            "time": utc_now(),
        }
        if executable is not None:
            entry["executable"] = dict(executable)
        pins[self.key(server, definition.name)] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps({"version": 1, "pins": pins}, indent=1, sort_keys=True) + "\n"
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-pins-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

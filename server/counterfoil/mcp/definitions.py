"""A tool as a server defines it, and the digest a person's approval pins: canonical JSON of its
name, description and input schema, so a changed description or schema (tool poisoning) is a
new definition that must be approved again."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..receipts import canonical_json


@dataclass(frozen=True)
class ToolDefinition:
    """One tool of one server, as its `tools/list` gave it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]

    def pinned_fields(self) -> dict[str, Any]:
        """What the digest covers; the server's annotations (read-only hints and the like) are
        not among them: what a tool may do is the person's to say, not the server's."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    @property
    def sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.pinned_fields()).encode("utf-8")).hexdigest()


def changed_fields(before: dict[str, Any], after: ToolDefinition) -> tuple[str, ...]:
    """Which of the pinned fields differ between an approved definition and `after`."""
    now = after.pinned_fields()
    return tuple(
        name for name in ("name", "description", "input_schema") if before.get(name) != now[name]
    )

"""What a person is asked to approve: the exact bytes of an edit, or the exact argv of a command."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from .actions import ToolAction


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ToolProposal:
    tool_call_id: str
    action: ToolAction
    kind: Literal["edit", "command"]
    path: str | None = None
    base_text: str | None = None
    base_sha256: str | None = None
    proposed_text: str | None = None
    proposed_sha256: str | None = None
    argv: tuple[str, ...] | None = None
    cwd: str | None = None
    timeout_seconds: float | None = None
    reverts: str | None = None

    @property
    def creates_file(self) -> bool:
        return self.kind == "edit" and self.base_sha256 is None

    @property
    def removes_file(self) -> bool:
        """A revert of an effect that created its file."""
        return self.kind == "edit" and self.proposed_text is None

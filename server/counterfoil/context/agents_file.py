"""The project's `AGENTS.md`: its rules for coding agents, put into the system prompt.

Only the file at the root counts. A nested `AGENTS.md` is an ordinary file the model may read
like any other; it does not get to instruct the whole run, and the prompt does not grow with
the tree. The root's file is read under the gate's path rules (a protected name, a symlink, a
hard link or the receipt log is not read) and only up to `MAX_AGENTS_FILE_BYTES`; a file over
that is not read at all rather than cut. Its digest is shown and recorded with the run, so a
person can tell which rules a run was given. The rules add to the gate's; they cannot loosen it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import AgentError
from ..files.files import open_directory, read_regular_file

AGENTS_FILE = "AGENTS.md"
MAX_AGENTS_FILE_BYTES = 16 * 1024


class ResolvesPaths(Protocol):
    def resolve_path(self, raw: str, *, must_exist: bool = True) -> Any: ...


@dataclass(frozen=True)
class AgentsFile:
    """What became of the root's AGENTS.md: its text and digest, or why it was not read."""

    path: str = AGENTS_FILE
    text: str | None = None
    sha256: str | None = None
    size: int | None = None
    not_read: str | None = None  # "protected", "too large", "not valid UTF-8", "unreadable"

    def summary(self) -> str:
        """One line for a run's header."""
        if self.sha256 is not None:
            return f"{self.path} sha256 {self.sha256} ({self.size} bytes)"
        return f"{self.path} not read ({self.not_read})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "bytes": self.size,
            "notRead": self.not_read,
        }


def read_agents_file(workspace: ResolvesPaths, root: Path) -> AgentsFile | None:
    """The AGENTS.md at `root` (the workspace's) as the gate allows it to be read; None when
    there is none."""
    if not os.path.lexists(root / AGENTS_FILE):
        return None
    try:
        path = workspace.resolve_path(AGENTS_FILE)
        with open_directory(path.parent, ()) as directory:
            data = read_regular_file(directory, path.name, MAX_AGENTS_FILE_BYTES)
    except AgentError as error:
        reason = "too large" if "exceeds" in str(error) else "protected"
        return AgentsFile(not_read=reason)
    except OSError:
        return AgentsFile(not_read="unreadable")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return AgentsFile(not_read="not valid UTF-8")
    return AgentsFile(text=text, sha256=hashlib.sha256(data).hexdigest(), size=len(data))

"""What of a receipt log's folder the agent may not touch.

When the log's folder lies inside the agent's root (the default, `.counterfoil/`), it is hidden
with all it holds: other logs there, their heads, the content store, holds and anything else
(it is not listed, not read, and nothing can be created in it).
When the log sits directly in the root (or outside it), hiding its folder would hide the
project, so only what belongs to a log is hidden: the log, every `*.head` and the log beside
it, the heads' temporary files and the log's own folder (`.<log name>.counterfoil/`, see
`own_folder`); a project's `objects/` or `sessions/` there stays the project's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .content import OBJECTS_FOLDER
from .head import HEAD_SUFFIX
from .hold import HOLDS_FOLDER, SESSIONS_FOLDER
from .own_folder import own_folder, shares_folder


@dataclass(frozen=True)
class LogGuard:
    log: Path  # resolved
    whole_folder: bool  # the log's folder lies inside the root: all it holds is hidden

    @classmethod
    def of(cls, log: Path, root: Path | None) -> LogGuard:
        resolved = log.resolve()
        inside = root is not None and root.resolve() in resolved.parent.parents
        return cls(resolved, inside)

    @property
    def folder(self) -> Path:
        return self.log.parent

    def hides(self, path: Path) -> bool:
        """Whether `path` (absolute, in the root) is the log's or, for a folder inside the
        root, its folder or in it; letter case aside, for case-insensitive disks."""
        folder = str(self.folder).casefold()
        text = str(path).casefold()
        if self.whole_folder:
            return text == folder.rstrip(os.sep) or _is_under(text, folder)
        parts = Path(text).relative_to(folder).parts if _is_under(text, folder) else ()
        if not parts:
            return False
        name = parts[0]
        if name in (own_folder(self.log).name.casefold(), self.log.name.casefold()):
            return True
        if shares_folder(self.log) and name in (
            OBJECTS_FOLDER,
            HOLDS_FOLDER.casefold(),
            SESSIONS_FOLDER,
        ):
            return True
        if len(parts) > 1:
            return False
        return (
            name.endswith(HEAD_SUFFIX)
            or os.path.lexists(self.folder / (path.name + HEAD_SUFFIX))
            or (name.startswith(".") and name.endswith(".tmp") and HEAD_SUFFIX + "." in name)
        )


def _is_under(text: str, folder: str) -> bool:
    return text.startswith(folder.rstrip(os.sep) + os.sep)

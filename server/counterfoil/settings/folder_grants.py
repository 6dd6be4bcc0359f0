"""The folder grants this person confirmed on this machine, kept outside every folder.

A folder's `allowWrites`, `allowedCommands` or model file applies only once confirmed; the
confirmation lives in the installation's config folder (`folder-grants.json`, beside the
installation secret, hidden from every command), keyed by the folder and by a digest of the
value asked for, so a folder that changes its request asks again. `origin` says who confirmed:
`walkthrough` (Counterfoil's own walkthrough or commands wrote the value) or `person` (the
person said yes to the folder's request).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any, Literal

from ..receipts.signing import config_dir

GRANTS_FILE = "folder-grants.json"
GrantOrigin = Literal["walkthrough", "person"]
ORIGINS: tuple[GrantOrigin, ...] = ("walkthrough", "person")


def grant_digest(key: str, value: Any) -> str:
    """The digest of one asked value: its key and its JSON, canonical."""
    if isinstance(value, tuple):
        value = [list(item) if isinstance(item, tuple) else item for item in value]
    text = json.dumps(
        {"key": key, "value": value}, sort_keys=True, separators=(",", ":"), default=_plain
    )
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _plain(value: Any) -> Any:
    """A checked value that is a record (an MCP server's entry) digests as its fields."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} has no canonical JSON")


@dataclass(frozen=True)
class FolderGrants:
    """The confirmations file; `folder` is the config folder (default: the installation's)."""

    folder: Path | None = None

    @property
    def path(self) -> Path:
        return (self.folder or config_dir()) / GRANTS_FILE

    def _entries(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        entries = data.get("grants") if isinstance(data, dict) else None
        return [entry for entry in entries or [] if isinstance(entry, dict)]

    def origin(self, root: Path, key: str, value: Any) -> GrantOrigin | None:
        """Who confirmed `key` = `value` for the folder `root`; None: nobody yet."""
        folder, digest = str(Path(root).resolve()), grant_digest(key, value)
        for entry in self._entries():
            if (entry.get("folder"), entry.get("key"), entry.get("digest")) == (
                folder,
                key,
                digest,
            ) and entry.get("origin") in ORIGINS:
                origin: GrantOrigin = entry["origin"]
                return origin
        return None

    def confirm(self, root: Path, key: str, value: Any, origin: GrantOrigin) -> None:
        """Record the confirmation (replacing the folder's earlier one for `key`)."""
        folder = str(Path(root).resolve())
        kept = [
            entry
            for entry in self._entries()
            if (entry.get("folder"), entry.get("key")) != (folder, key)
        ]
        kept.append(
            {"folder": folder, "key": key, "digest": grant_digest(key, value), "origin": origin}
        )
        self._write({"version": 1, "grants": kept})

    def _write(self, data: dict[str, Any]) -> None:
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".folder-grants-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

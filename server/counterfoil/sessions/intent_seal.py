"""An intent is trusted only when this installation wrote it for this log.

Each intent is bound to the receipt log it was written for (its path and the head it extended
then) and to its run's checkpoint, and sealed with an HMAC-SHA256 under an installation secret
kept outside every project (`<config folder>/installation-secret`, 0600, made on first use).
A repository that ships a `sessions/` folder, or a run folder copied from elsewhere, cannot
produce the seal, so its intents are reported as foreign and never turned into receipts.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..receipts.signing import config_dir

SECRET_FILE = "installation-secret"
SECRET_BYTES = 32
SEAL_KEY = "seal"
BINDING_KEY = "binding"
FILE_FIELDS = ("path", "base_sha256", "proposed_sha256", "reverts")
COMMAND_FIELDS = ("argv", "cwd")
MCP_FIELDS = ("mcp",)
COMMON_FIELDS = ("call_id", "run_id", "tool", "arguments", "root", "approval", "kind")


def installation_secret(folder: Path | None = None) -> bytes:
    """The secret that seals intents, made (0600, never through a symlink) when absent."""
    folder = folder or config_dir()
    path = folder / SECRET_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(SECRET_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            secret = handle.read(SECRET_BYTES + 1)
    except OSError as error:
        raise AgentError(
            f"the installation secret {path} is not usable: {error.strerror or error}"
        ) from None
    if not stat.S_ISREG(info.st_mode) or len(secret) != SECRET_BYTES:
        raise AgentError(f"the installation secret {path} is not a {SECRET_BYTES}-byte file")
    return secret


def _mac(intent: dict[str, Any], secret: bytes) -> str:
    body = {key: value for key, value in intent.items() if key != SEAL_KEY}
    encoded = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(secret, b"counterfoil intent\n" + encoded, hashlib.sha256).hexdigest()


def seal(intent: dict[str, Any], binding: dict[str, Any]) -> dict[str, Any]:
    """`intent` bound to `binding` (its log and checkpoint), with its seal."""
    bound = {key: value for key, value in intent.items() if key != SEAL_KEY}
    bound.setdefault(BINDING_KEY, binding)
    bound[SEAL_KEY] = _mac(bound, installation_secret())
    return bound


def seal_problem(intent: object, name: str) -> str | None:
    """Why `intent` (from the file `name`) cannot be trusted, or None when its seal holds and
    it has every field settling reads."""
    if not isinstance(intent, dict):
        return f"{name} is not an intent"
    seal_value = intent.get(SEAL_KEY)
    if not isinstance(seal_value, str) or not hmac.compare_digest(
        seal_value, _mac(intent, installation_secret())
    ):
        return f"{name} was not written by this installation"
    kind = intent.get("kind")
    kind_fields = {"command": COMMAND_FIELDS, "mcp": MCP_FIELDS}.get(str(kind), FILE_FIELDS)
    missing = [key for key in COMMON_FIELDS + kind_fields if key not in intent]
    if kind not in ("command", "file", "mcp"):
        missing.append("kind")
    if missing or not isinstance(intent.get(BINDING_KEY), dict):
        return f"{name} is malformed (missing {', '.join(missing) or BINDING_KEY})"
    return None

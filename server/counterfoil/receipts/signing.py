"""Ed25519 signatures on log lines, with a per-user key.

Only this module imports `cryptography` (the optional `sign` extra), and only when a key exists
or a signature is checked; unsigned logs are written and verified with the standard library.
A line's signature is over its chain link, which commits to the whole line and every line
before it, so a forged line with a recomputed chain fails with the right public key.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentError

KEY_FILE = "receipt-signing-key.pem"
PUBLIC_KEY_FILE = "receipt-signing-key.pub"
PUBLIC_KEY_PREFIX = "ed25519:"
SIGNED_PREFIX = b"counterfoil receipt link "


def config_dir() -> Path:
    """COUNTERFOIL_CONFIG_DIR, else $XDG_CONFIG_HOME/counterfoil, else ~/.config/counterfoil."""
    override = os.environ.get("COUNTERFOIL_CONFIG_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "counterfoil"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise AgentError(
            "signing receipts needs the sign extra: pip install 'counterfoil[sign]'"
        ) from None
    return ed25519


def signed_message(link: str) -> bytes:
    return SIGNED_PREFIX + link.encode("ascii")


def _public_text(raw: bytes) -> str:
    return PUBLIC_KEY_PREFIX + base64.b64encode(raw).decode("ascii")


def parse_public_key(text: str) -> bytes:
    """The 32 raw bytes of `ed25519:<base64>`."""
    text = text.strip()
    if not text.startswith(PUBLIC_KEY_PREFIX):
        raise AgentError("public key must look like ed25519:<base64>")
    try:
        raw = base64.b64decode(text[len(PUBLIC_KEY_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise AgentError("public key is not valid base64") from None
    if len(raw) != 32:
        raise AgentError("public key must be 32 bytes")
    return raw


@dataclass(frozen=True)
class Signer:
    private_key: Any
    public_key: str

    def sign(self, link: str) -> str:
        return self.sign_bytes(signed_message(link))

    def sign_bytes(self, message: bytes) -> str:
        return base64.b64encode(self.private_key.sign(message)).decode("ascii")


def init_key(folder: Path | None = None) -> tuple[Path, str]:
    """Make the user's signing key (0600) once; returns its path and public key text."""
    from cryptography.hazmat.primitives import serialization

    ed25519 = _crypto()
    folder = folder or config_dir()
    path = folder / KEY_FILE
    public_path = folder / PUBLIC_KEY_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise AgentError(f"could not make {folder}: {error.strerror or error}") from None
    for existing in (path, public_path):
        if os.path.lexists(existing):
            what = "a symlink" if existing.is_symlink() else "a file"
            raise AgentError(f"{what} is already at {existing}; remove it to make a new key")
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    public = _public_text(raw)
    _write_new(path, pem, 0o600)
    _write_new(public_path, (public + "\n").encode("ascii"), 0o644)
    return path, public


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create `path` (never through a symlink, never over a file that appeared meanwhile)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except OSError as error:
        raise AgentError(f"could not create {path}: {error.strerror or error}") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def load_signer(folder: Path | None = None) -> Signer | None:
    """The user's signer when a key exists; None when there is none."""
    path = (folder or config_dir()) / KEY_FILE
    try:
        pem = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise AgentError(f"could not read signing key {path}: {error.strerror}") from None
    from cryptography.hazmat.primitives import serialization

    ed25519 = _crypto()
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise AgentError(f"signing key {path} is not an Ed25519 key")
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return Signer(key, _public_text(raw))


class SignatureChecker:
    """Checks against one expected public key: a line's signature (called as `take_line`'s
    check) and a head's (`check_head`)."""

    def __init__(self, expected_public_key: str) -> None:
        ed25519 = _crypto()
        raw = parse_public_key(expected_public_key)
        self._verifier = ed25519.Ed25519PublicKey.from_public_bytes(raw)
        self.expected = expected_public_key.strip()

    def verifies(self, message: bytes, signature: str) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            self._verifier.verify(base64.b64decode(signature, validate=True), message)
        except (InvalidSignature, binascii.Error, ValueError):
            return False
        return True

    def __call__(self, public_key: str, link: str, signature: str) -> None:
        if public_key != self.expected:
            raise AgentError("receipt is signed by a different key")
        if not self.verifies(signed_message(link), signature):
            raise AgentError("receipt signature does not verify")

    def check_head(self, signed_by: str | None, message: bytes, signature: str | None) -> None:
        if signed_by != self.expected or signature is None:
            raise AgentError("the head record is not signed by this key (it was rewritten)")
        if not self.verifies(message, signature):
            raise AgentError("the head record's signature does not verify (it was rewritten)")


def signature_checker(expected_public_key: str) -> SignatureChecker:
    """Every signature must be by `expected_public_key` and valid."""
    return SignatureChecker(expected_public_key)

"""Who may sign a team's evidence: the allowed-signers file, one key per line with its owner.

The file is meant to be committed (`.counterfoil/allowed_signers`), as ssh's allowed_signers is
for signed commits: `OWNER ed25519:<base64>`, `#` starts a comment.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError
from ..receipts.signing import SignatureChecker, parse_public_key

ALLOWED_SIGNERS_FILE = ".counterfoil/allowed_signers"
MAX_SIGNERS_BYTES = 1024 * 1024


def key_id(public_key: str) -> str:
    """A key's DSSE keyid: `SHA256:` and the hex digest of its 32 raw bytes."""
    return "SHA256:" + hashlib.sha256(parse_public_key(public_key)).hexdigest()


@dataclass(frozen=True)
class AllowedSigner:
    owner: str
    public_key: str

    @property
    def keyid(self) -> str:
        return key_id(self.public_key)

    def verifies(self, message: bytes, signature: bytes) -> bool:
        checker = SignatureChecker(self.public_key)
        return checker.verifies(message, base64.b64encode(signature).decode("ascii"))


def signer_line(owner: str, public_key: str) -> str:
    if not owner or any(character.isspace() for character in owner):
        raise AgentError("the owner must be one word without spaces (an e-mail address, say)")
    parse_public_key(public_key)
    return f"{owner} {public_key}"


def parse_allowed_signers(text: str) -> list[AllowedSigner]:
    signers: list[AllowedSigner] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise AgentError(f"allowed signers line {number}: expected OWNER ed25519:<base64>")
        try:
            parse_public_key(parts[1])
        except AgentError as error:
            raise AgentError(f"allowed signers line {number}: {error}") from None
        signers.append(AllowedSigner(parts[0], parts[1]))
    return signers


def read_allowed_signers(path: Path) -> list[AllowedSigner]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SIGNERS_BYTES + 1)
    except OSError as error:
        raise AgentError(f"could not read allowed signers {path}: {error.strerror}") from None
    if len(data) > MAX_SIGNERS_BYTES:
        raise AgentError(f"allowed signers {path} is over {MAX_SIGNERS_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AgentError(f"allowed signers {path} is not UTF-8 text") from None
    signers = parse_allowed_signers(text)
    if not signers:
        raise AgentError(f"allowed signers {path} names no key")
    return signers

"""Who may sign a team's evidence: the allowed-signers file, one key per line with its owner.

The file is meant to be committed (`.counterfoil/allowed_signers`), as ssh's allowed_signers is
for signed commits: `OWNER ed25519:<base64>`, `#` starts a comment.
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError
from ..receipts.signing import SignatureChecker, parse_public_key

ALLOWED_SIGNERS_FILE = ".counterfoil/allowed_signers"
MAX_SIGNERS_BYTES = 1024 * 1024
FIELD_SEPARATORS = " \t"


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


@dataclass(frozen=True)
class AllowedSigners:
    """The keys a file allows, and a sentence for each line that is not a valid entry."""

    signers: tuple[AllowedSigner, ...]
    problems: tuple[str, ...]


def parse_allowed_signers(text: str) -> AllowedSigners:
    """Read as git and ssh read it: a line ends only at `\\n` (any other break, such as U+2028 or
    `\\x85`, is part of the line, so a comment hides nothing), fields are split at spaces and
    tabs, and a line that is not a valid entry is a problem, never skipped."""
    signers: list[AllowedSigner] = []
    problems: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r").strip(FIELD_SEPARATORS)
        if not line or line.startswith("#"):
            continue
        parts = [part for part in re.split(f"[{FIELD_SEPARATORS}]+", line) if part]
        if len(parts) != 2 or not all(_plain(part) for part in parts):
            problems.append(f"allowed signers line {number}: expected OWNER ed25519:<base64>")
            continue
        try:
            parse_public_key(parts[1])
        except AgentError as error:
            problems.append(f"allowed signers line {number}: {error}")
            continue
        signers.append(AllowedSigner(parts[0], parts[1]))
    return AllowedSigners(tuple(signers), tuple(problems))


def _plain(field: str) -> bool:
    """A field without control, format or separator characters, which a reader cannot see."""
    return all(unicodedata.category(character)[0] not in "CZ" for character in field)


def allowed_signers_of(data: bytes, where: str) -> AllowedSigners:
    """The allowed signers in `data` (read from `where`, named in any refusal)."""
    if len(data) > MAX_SIGNERS_BYTES:
        raise AgentError(f"allowed signers {where} is over {MAX_SIGNERS_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AgentError(f"allowed signers {where} is not UTF-8 text") from None
    allowed = parse_allowed_signers(text)
    if not allowed.signers and not allowed.problems:
        raise AgentError(f"allowed signers {where} names no key")
    return allowed


def read_allowed_signers(path: Path) -> AllowedSigners:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SIGNERS_BYTES + 1)
    except OSError as error:
        raise AgentError(f"could not read allowed signers {path}: {error.strerror}") from None
    return allowed_signers_of(data, str(path))

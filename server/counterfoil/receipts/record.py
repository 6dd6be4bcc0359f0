"""One receipt: the course's six fields and id, plus the evidence a person can check later.

The id is the SHA-256 of the six fields exactly as the course defines it, so course logs still
load. The evidence (run, time, digests, approval: `evidence.ReceiptEvidence`) sits beside them on the
same line; the chain link of a line that carries evidence commits to the whole line (see
`line_digest`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import AgentError
from ..receipt_fields import ReceiptEvidence, evidence_keys

RECEIPT_FIELDS = (
    "tool_call_id",
    "tool",
    "arguments",
    "exit_state",
    "result",
    "changed_artifacts",
)
EVIDENCE_FIELDS = evidence_keys()  # the fields of `ReceiptEvidence`, as the line names them
CHAIN_KEY = "chain_sha256"
SIGNATURE_KEY = "signature"
PUBLIC_KEY_KEY = "public_key"
EXIT_STATES = ("ok", "error")


COURSE_KEYS = frozenset({"receipt_id", *RECEIPT_FIELDS})
LINE_KEYS = COURSE_KEYS | EVIDENCE_FIELDS
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def canonical_json(value: Any) -> str:
    """The one encoding every digest is taken over: sorted keys, no spaces, ASCII."""
    return _CANONICAL.encode(value)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class EffectReceipt:
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    exit_state: str
    result: str
    changed_artifacts: tuple[str, ...] = ()
    evidence: ReceiptEvidence = field(default_factory=ReceiptEvidence)

    def payload(self) -> dict[str, Any]:
        return {
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "exit_state": self.exit_state,
            "result": self.result,
            "changed_artifacts": list(self.changed_artifacts),
        }

    @cached_property
    def receipt_id(self) -> str:
        return payload_digest(self.payload())

    def to_dict(self) -> dict[str, Any]:
        return {"receipt_id": self.receipt_id, **self.payload(), **self.evidence.as_record()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EffectReceipt:
        """Rebuild a receipt and check that its id matches its contents."""
        check_fields(data)
        artifacts = data["changed_artifacts"]
        receipt = cls(
            tool_call_id=data["tool_call_id"],
            tool=data["tool"],
            arguments=data["arguments"],
            exit_state=data["exit_state"],
            result=data["result"],
            changed_artifacts=tuple(artifacts),
            evidence=ReceiptEvidence.from_record(
                {key: value for key, value in data.items() if key not in COURSE_KEYS}
            ),
        )
        if receipt.receipt_id != data["receipt_id"]:
            raise AgentError("receipt digest does not match its contents")
        return receipt


def check_fields(data: Any) -> None:
    """The course's six fields and an id, each of its type, and no field this version does not
    know."""
    if type(data) is not dict or not (COURSE_KEYS <= data.keys() <= LINE_KEYS):
        raise AgentError("receipt is malformed")
    artifacts = data["changed_artifacts"]
    if (
        type(data["tool_call_id"]) is not str
        or type(data["tool"]) is not str
        or type(data["result"]) is not str
        or type(data["arguments"]) is not dict
        or data["exit_state"] not in EXIT_STATES
        or type(artifacts) is not list
        or (artifacts and not all(type(item) is str for item in artifacts))
    ):
        raise AgentError("receipt is malformed")


def payload_digest(data: dict[str, Any]) -> str:
    """The course's receipt id: SHA-256 of the six fields as canonical JSON."""
    return sha256_text(canonical_json({key: data[key] for key in RECEIPT_FIELDS}))


def chain_link(previous_link: str, digest: str) -> str:
    """The link of a line: it commits to every line before it."""
    return hashlib.sha256(f"{previous_link}:{digest}".encode("ascii")).hexdigest()


CHAIN_FIELD_BYTES = b',"chain_sha256":"'
SIGNATURE_FIELD_BYTES = b',"signature":"'
CHAIN_TAIL_BYTES = len(CHAIN_FIELD_BYTES) + 64 + 2


def encode_line(
    receipt: EffectReceipt, previous_link: str, signer: Any = None
) -> tuple[bytes, str]:
    """The log line of `receipt` (without its newline) and its link.

    A course-format receipt links through its id, as the first versions did. Any other line
    links through the SHA-256 of its own bytes up to the signature and link, which come last:
    the receipt id commits to the six fields, the bytes to everything else on the line.
    """
    line = receipt.to_dict()
    if not receipt.evidence.as_record() and signer is None:
        link = chain_link(previous_link, receipt.receipt_id)
        return json.dumps({**line, CHAIN_KEY: link}, separators=(",", ":")).encode(), link
    if signer is not None:
        line[PUBLIC_KEY_KEY] = signer.public_key
    body = json.dumps(line, separators=(",", ":")).encode("ascii")
    link = chain_link(previous_link, hashlib.sha256(body).hexdigest())
    tail = b""
    if signer is not None:
        tail += SIGNATURE_FIELD_BYTES + signer.sign(link).encode("ascii") + b'"'
    tail += CHAIN_FIELD_BYTES + link.encode("ascii") + b'"}'
    return body[:-1] + tail, link


def signed_body(raw: bytes) -> bytes | None:
    """The bytes a written line's link commits to: the line without its trailing signature
    and link fields; None when the line does not end the way lines are written."""
    cut = len(raw) - CHAIN_TAIL_BYTES
    if cut <= 0 or raw[cut : cut + len(CHAIN_FIELD_BYTES)] != CHAIN_FIELD_BYTES:
        return None
    head = raw[:cut]
    signature = head.rfind(SIGNATURE_FIELD_BYTES)
    if signature >= 0 and head.endswith(b'"') and b'"' not in head[signature + 14 : -1]:
        head = head[:signature]
    return head + b"}"


def line_digest(raw: bytes, record: dict[str, Any], plain: bool) -> str | None:
    """What a checked line's link commits to (see `encode_line`); None when its form is off."""
    if plain:
        return str(record["receipt_id"])
    body = signed_body(raw)
    return None if body is None else hashlib.sha256(body).hexdigest()

"""One receipt: the course's six fields and id, plus the evidence a person can check later.

The id is the SHA-256 of the six fields exactly as the course defines it, so course logs still
load. The evidence (run, time, digests, approval) sits beside them on the same line; the chain
link of a line that carries evidence commits to the whole line (see `line_digest`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import AgentError

RECEIPT_FIELDS = (
    "tool_call_id",
    "tool",
    "arguments",
    "exit_state",
    "result",
    "changed_artifacts",
)
EVIDENCE_FIELDS = frozenset(
    {
        "run_id",
        "time",
        "base_sha256",
        "result_sha256",
        "argv",
        "cwd",
        "exit_status",
        "duration_seconds",
        "output_sha256",
        "output_truncated",
        "approval",
        "reverts",
    }
)
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
    evidence: dict[str, Any] = field(default_factory=dict, compare=True)

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
        return {"receipt_id": self.receipt_id, **self.payload(), **self.evidence}

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
            evidence={key: data[key] for key in data.keys() - COURSE_KEYS},
        )
        if receipt.receipt_id != data["receipt_id"]:
            raise AgentError("receipt digest does not match its contents")
        return receipt


def check_fields(data: Any) -> None:
    """The course's six fields and an id, each of its type, and no field this version does not
    know."""
    if not isinstance(data, dict) or not (COURSE_KEYS <= data.keys() <= LINE_KEYS):
        raise AgentError("receipt is malformed")
    artifacts = data["changed_artifacts"]
    if (
        not isinstance(data["tool_call_id"], str)
        or not isinstance(data["tool"], str)
        or not isinstance(data["result"], str)
        or not isinstance(data["arguments"], dict)
        or data["exit_state"] not in EXIT_STATES
        or not isinstance(artifacts, list)
        or not all(isinstance(item, str) for item in artifacts)
    ):
        raise AgentError("receipt is malformed")


def payload_digest(data: dict[str, Any]) -> str:
    """The course's receipt id: SHA-256 of the six fields as canonical JSON."""
    return sha256_text(canonical_json({key: data[key] for key in RECEIPT_FIELDS}))


def record_digest(data: dict[str, Any]) -> str:
    """What a checked line (link and signature removed) commits to; see `line_digest`."""
    receipt_id: str = data["receipt_id"]
    if len(data) == len(COURSE_KEYS):
        return receipt_id
    extras = {key: value for key, value in data.items() if key not in COURSE_KEYS}
    return sha256_text(f"{receipt_id}:{canonical_json(extras)}")


def chain_link(previous_link: str, digest: str) -> str:
    """The link of a line: it commits to every line before it."""
    return hashlib.sha256(f"{previous_link}:{digest}".encode("ascii")).hexdigest()


def line_digest(receipt: EffectReceipt, public_key: str | None = None) -> str:
    """What a line's link commits to: its receipt id for a course-format line; otherwise the
    receipt id (which commits to the six fields) and every other field on the line but the
    link and the signature, as canonical JSON — so the whole line is covered."""
    line = receipt.to_dict()
    if public_key is not None:
        line[PUBLIC_KEY_KEY] = public_key
    return record_digest(line)

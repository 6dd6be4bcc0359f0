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
LINE_EXTRA_FIELDS = frozenset({CHAIN_KEY, SIGNATURE_KEY, PUBLIC_KEY_KEY})
EXIT_STATES = ("ok", "error")


def canonical_json(value: Any) -> str:
    """The one encoding every digest is taken over: sorted keys, no spaces, ASCII."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


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
        return sha256_text(canonical_json(self.payload()))

    def to_dict(self) -> dict[str, Any]:
        return {"receipt_id": self.receipt_id, **self.payload(), **self.evidence}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EffectReceipt:
        """Rebuild a receipt and check that its id matches its contents."""
        if not isinstance(data, dict):
            raise AgentError("receipt is malformed")
        keys = set(data)
        course = {"receipt_id", *RECEIPT_FIELDS}
        if not course <= keys or not (keys - course) <= EVIDENCE_FIELDS:
            raise AgentError("receipt is malformed")
        artifacts = data["changed_artifacts"]
        if (
            not all(isinstance(data[key], str) for key in ("tool_call_id", "tool", "result"))
            or not isinstance(data["arguments"], dict)
            or data["exit_state"] not in EXIT_STATES
            or not isinstance(artifacts, list)
            or not all(isinstance(item, str) for item in artifacts)
        ):
            raise AgentError("receipt is malformed")
        receipt = cls(
            tool_call_id=data["tool_call_id"],
            tool=data["tool"],
            arguments=data["arguments"],
            exit_state=data["exit_state"],
            result=data["result"],
            changed_artifacts=tuple(artifacts),
            evidence={key: data[key] for key in keys - course},
        )
        if receipt.receipt_id != data["receipt_id"]:
            raise AgentError("receipt digest does not match its contents")
        return receipt


def chain_link(previous_link: str, digest: str) -> str:
    """The link of a line: it commits to every line before it."""
    return hashlib.sha256(f"{previous_link}:{digest}".encode("ascii")).hexdigest()


def line_digest(receipt: EffectReceipt, public_key: str | None = None) -> str:
    """What a line's link commits to: its receipt id for a course-format line, else the whole
    line (every field but the link and the signature) as canonical JSON."""
    if not receipt.evidence and public_key is None:
        return receipt.receipt_id
    line = receipt.to_dict()
    if public_key is not None:
        line[PUBLIC_KEY_KEY] = public_key
    return sha256_text(canonical_json(line))

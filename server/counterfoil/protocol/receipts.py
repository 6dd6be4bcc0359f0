"""The receipt log as the client reads it: receipts, their verification, stored objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..receipt_fields import JsonValue, ReceiptEvidence
from .field_checks import SHA256, WORD, checked
from .wire import SOMETIMES


@dataclass(frozen=True, kw_only=True)
class LoggedReceipt(ReceiptEvidence):
    """A receipt as the log holds it (snake_case, as written): the course's six fields and id,
    and the evidence (`receipt_fields.py`, declared once there) the effect had."""

    receipt_id: str
    tool_call_id: str
    tool: str
    arguments: dict[str, JsonValue]
    exit_state: Literal["ok", "error"]
    result: str
    changed_artifacts: list[str]


@dataclass(frozen=True, kw_only=True)
class Receipt(LoggedReceipt):
    """A receipt as the daemon sends it: the logged receipt and the daemon's word on it."""

    # Revert can undo what it records (a file effect with its digests, or a command whose
    # changes in the root include a file it can put back); the files are checked on revert.
    revertable: bool
    # The model that proposed it, in a few words (`identity_short`: spec, short digest, engine).
    proposedBy: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class ExportEvidenceParams:
    commit: str = field(metadata=checked(WORD))  # a revision: HEAD, a branch, a commit id


@dataclass(frozen=True, kw_only=True)
class ExportEvidenceResult:
    """The evidence note added to a commit (docs/evidence.md), or why none was."""

    ok: bool
    error: str | None
    commit: str | None
    runs: list[str]
    effects: int
    reviewRejected: list[str]  # commands whose reviewed changes were rejected
    files: int
    validation: str | None
    unreceipted: list[str]  # paths the commit changed by hand: bytes no receipt wrote


@dataclass(frozen=True, kw_only=True)
class VerifyResult:
    ok: bool
    count: int
    error: str | None
    line: int | None  # 1-based number of the first bad line
    chainOk: bool
    chainError: str | None
    drift: list[str] | None  # "app.py changed after call-1"; null: not checked (chain broken)


@dataclass(frozen=True, kw_only=True)
class ObjectParams:
    sha256: str = field(metadata=checked(SHA256))


@dataclass(frozen=True, kw_only=True)
class ObjectResult:
    sha256: str
    found: bool
    text: str | None  # the bytes decoded as UTF-8, at most 1 MiB
    bytes: int
    truncated: bool

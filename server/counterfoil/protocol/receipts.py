"""The receipt log as the client reads it: receipts, their verification, stored objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .field_checks import SHA256, WORD, checked
from .wire import SOMETIMES


@dataclass(frozen=True, kw_only=True)
class Approval:
    decision: str | None = field(default=None, metadata=SOMETIMES)
    by: str | None = field(default=None, metadata=SOMETIMES)
    via: str | None = field(default=None, metadata=SOMETIMES)
    shown_sha256: str | None = field(default=None, metadata=SOMETIMES)
    approved_sha256: str | None = field(default=None, metadata=SOMETIMES)
    modified: bool | None = field(default=None, metadata=SOMETIMES)
    # Where the grant that allowed the effect came from: `settings` (the person's own),
    # `walkthrough`, `confirmed-folder` (a folder's grant the person said yes to), `task-package`.
    grant: str | None = field(default=None, metadata=SOMETIMES)
    # The model that proposed it (`ModelIdentity.as_record()`); absent for a scripted model.
    model: Any = field(default=None, metadata=SOMETIMES)
    # False: nobody was asked (an MCP tool the person marked read-only; `via: readOnlyTools`).
    asked: bool | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class LoggedReceipt:
    """A receipt as the log holds it (snake_case, as written); evidence fields are those the
    effect had."""

    receipt_id: str
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    exit_state: Literal["ok", "error"]
    result: str
    changed_artifacts: list[str]
    run_id: str | None = field(default=None, metadata=SOMETIMES)
    time: str | None = field(default=None, metadata=SOMETIMES)
    approval: Approval | None = field(default=None, metadata=SOMETIMES)
    base_sha256: str | None = field(default=None, metadata=SOMETIMES)
    result_sha256: str | None = field(default=None, metadata=SOMETIMES)
    argv: list[str] | None = field(default=None, metadata=SOMETIMES)
    cwd: str | None = field(default=None, metadata=SOMETIMES)
    exit_status: int | None = field(default=None, metadata=SOMETIMES)
    duration_seconds: float | None = field(default=None, metadata=SOMETIMES)
    output_sha256: str | None = field(default=None, metadata=SOMETIMES)
    output_truncated: bool | None = field(default=None, metadata=SOMETIMES)
    reverts: str | None = field(default=None, metadata=SOMETIMES)
    created_folders: list[str] | None = field(default=None, metadata=SOMETIMES)
    removed_folders: list[str] | None = field(default=None, metadata=SOMETIMES)
    recovered: Any = field(default=None, metadata=SOMETIMES)  # settled from an intent
    run_record: bool | None = field(default=None, metadata=SOMETIMES)  # its run keeps a record
    # What a command changed in the tree, what changed beside it, how it was confined, and a
    # reviewed command's answer (see docs/protocol.md).
    tree_changes: Any = field(default=None, metadata=SOMETIMES)
    tree_drift: Any = field(default=None, metadata=SOMETIMES)
    sandbox: Any = field(default=None, metadata=SOMETIMES)
    review: Any = field(default=None, metadata=SOMETIMES)
    # An MCP call's server, definition digest and result digest (see docs/mcp.md).
    mcp: Any = field(default=None, metadata=SOMETIMES)


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

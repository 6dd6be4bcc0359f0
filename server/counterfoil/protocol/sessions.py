"""Runs kept on disk beside the receipt log, as the client lists, inspects, resumes and pauses
them, and each run's own record (goal, who ran it and how, its verdict, every decision)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .field_checks import RUN_ID, TEXT, checked

if TYPE_CHECKING:
    from .wire import SessionStateName


@dataclass(frozen=True, kw_only=True)
class PendingProposal:
    """The effect whose approval was open when the run stopped: asked again, as a fresh
    proposal re-checked against the disk, when the run is resumed."""

    toolCallId: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class FileWritten:
    """A file a run's receipt says it changed."""

    path: str
    toolCallId: str
    tool: str
    sha256: str | None  # the bytes it wrote; null: removed, or changed by a command


@dataclass(frozen=True, kw_only=True)
class SessionInfo:
    """One run with a checkpoint: what it is doing or did, from the disk alone."""

    runId: str
    state: SessionStateName  # interrupted: it stopped without saying so (a crash, a kill)
    goal: str | None  # null: the checkpoint cannot be read (see problem)
    steps: int
    lastAction: str | None
    updatedAt: str  # when its checkpoint was last written (UTC, ISO 8601)
    pending: PendingProposal | None
    filesChanged: list[FileWritten]  # what its receipts show it wrote, by which call
    problem: str | None  # why it cannot be resumed, one sentence


@dataclass(frozen=True, kw_only=True)
class SessionsResult:
    """`counterfoil/sessions`: every run with a checkpoint, oldest first."""

    sessions: list[SessionInfo]
    error: str | None


@dataclass(frozen=True, kw_only=True)
class InspectParams:
    runId: str = field(metadata=checked(RUN_ID))


@dataclass(frozen=True, kw_only=True)
class InspectResult(SessionInfo):
    """The course's inspect status of a stopped run, with what a resume would do first."""

    lastEvidence: str
    nextStep: str
    changedSinceRead: list[str]  # files the model read that no longer hold what it saw


@dataclass(frozen=True, kw_only=True)
class ResumeParams:
    runId: str = field(metadata=checked(RUN_ID))
    steer: str | None = field(
        default=None, metadata=checked(TEXT, sometimes=True)
    )  # one operator message first


@dataclass(frozen=True, kw_only=True)
class DiscardParams:
    runId: str = field(metadata=checked(RUN_ID))


@dataclass(frozen=True, kw_only=True)
class DiscardResult:
    """`counterfoil/discard`: the run is closed for good (its listing reads `discarded`);
    nothing it did is undone, and its open proposal, if any, is never asked."""

    runId: str
    goal: str
    pending: str | None  # the open proposal left unasked: its tool and path or command
    filesChanged: list[FileWritten]  # what its receipts show it wrote: it stays as it is


@dataclass(frozen=True, kw_only=True)
class PauseResult:
    """`counterfoil/pause`: whether a run was asked to pause (it stops at its next boundary)."""

    pausing: bool
    runId: str | None


@dataclass(frozen=True, kw_only=True)
class Decision:
    """One call's decision as the run's record holds it: approved (its receipt says what it
    did), rejected with the person's reason, refused with the gate's error, stale (the file
    changed while it waited), closed (its diff was closed unanswered), interrupted, failed,
    or settled from the disk after an interruption (`reason` says how)."""

    toolCallId: str
    tool: str | None
    state: str
    reason: str | None
    path: str | None
    argv: list[str] | None
    time: str | None


@dataclass(frozen=True, kw_only=True)
class StoredRunRecord:
    """A run's own record on disk (`counterfoil/receipts`' `records`), for every run of this
    root whoever ran it: the editor, the terminal, another window."""

    runId: str
    goal: str | None
    by: str | None  # the operating-system user who ran it
    via: str | None  # how its approvals were asked: editor or terminal
    startedAt: str | None
    endedAt: str | None
    # ended, paused (as asked) or interrupted (its daemon went away, as `sessions` says too);
    # null: it has not said (running, or killed)
    state: str | None
    reason: str | None
    effects: dict[str, int] | None  # approved, rejected, refused, failed: how many
    validation: str | None
    resumed: int  # how many times it was resumed
    decisions: list[Decision]
    problem: str | None  # the record does not verify: its first bad line

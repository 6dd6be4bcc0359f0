"""A run's requests, its result and verdict, and what it notifies as it goes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .field_checks import ARGV, CALL_ID, TEXT, checked
from .wire import SOMETIMES

if TYPE_CHECKING:
    from .receipts import Receipt
    from .review import ConfirmParams
    from .wire import ActivityPhase, ApprovalStateName, EffectState, RunStateName, Validation


@dataclass(frozen=True, kw_only=True)
class RunParams:
    goal: str = field(metadata=checked(TEXT))


@dataclass(frozen=True, kw_only=True)
class FollowUpParams:
    text: str = field(metadata=checked(TEXT))


@dataclass(frozen=True, kw_only=True)
class RunValidationParams:
    argv: list[str] = field(metadata=checked(ARGV))


@dataclass(frozen=True, kw_only=True)
class RevertParams:
    toolCallId: str = field(metadata=checked(CALL_ID))


@dataclass(frozen=True, kw_only=True)
class VerdictEffect:
    """What became of one effect call (the core's `EffectOutcome`)."""

    toolCallId: str
    tool: str
    state: EffectState
    path: str | None
    argv: list[str] | None
    sha256: str | None
    exitStatus: int | None
    timedOut: bool
    reason: str | None
    # A reviewed command's decision: accepted, partially accepted, rejected, nothing to
    # apply, not applied (what it changed in its copy reached the root only when accepted).
    review: str | None = field(default=None, metadata=SOMETIMES)
    # The text of the person's approval rule that approved it without asking (its canonical
    # JSON, as the receipt names it); absent when the person was asked or it was not approved.
    byRule: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class FileChanged:
    path: str
    sha256: str | None  # null: the run deleted it
    toolCallId: str


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What a run's effects did, never what the model said; `succeeded` is the CLI's exit 0."""

    succeeded: bool
    approved: list[str]
    rejected: list[str]
    refused: list[str]
    failed: list[str]
    # Approved commands whose reviewed changes the person rejected (counted apart: they ran).
    reviewRejected: list[str]
    filesChanged: list[FileChanged]
    validation: Validation
    validatedBy: str | None
    effects: list[VerdictEffect]


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """`counterfoil/run` and `counterfoil/followUp`; the steps came as `counterfoil/event`."""

    completed: bool
    reason: str
    final: str | None
    modifiedFiles: list[str]
    error: str | None
    verdict: Verdict
    runId: str | None = field(default=None, metadata=SOMETIMES)
    conversationId: str | None = field(default=None, metadata=SOMETIMES)
    followUp: bool | None = field(default=None, metadata=SOMETIMES)
    resumed: bool | None = field(default=None, metadata=SOMETIMES)
    modelUsage: str | None = field(default=None, metadata=SOMETIMES)
    # The model that ran, in the words every surface uses (`identity_short`: spec, short
    # digest, engine); absent for a script, which proposes nothing of its own.
    proposedBy: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class StepRecord:
    """The workspace's record of one step's call (the core's `StepResult`)."""

    toolCallId: str | None
    state: EffectState | None
    receiptId: str | None
    outputSha256: str | None
    resultSha256: str | None
    reason: str | None
    effect: VerdictEffect | None


@dataclass(frozen=True, kw_only=True)
class ValidationResult(StepRecord):
    """`counterfoil/runValidation` and `counterfoil/revert`."""

    observation: str
    receipt: Receipt | None


@dataclass(frozen=True, kw_only=True)
class AgentsFileRecord:
    """The root's AGENTS.md as the run read it: its digest and size, or why it was not read
    ("protected", "too large", "not valid UTF-8", "unreadable")."""

    path: str
    sha256: str | None
    bytes: int | None
    notRead: str | None


@dataclass(frozen=True, kw_only=True)
class RunStarted:
    runId: str
    conversationId: str
    goal: str  # the run's goal or the follow-up's text
    followUp: bool
    agentsFile: AgentsFileRecord | None  # the root's AGENTS.md the run's prompt holds, if any
    resumed: bool | None = field(default=None, metadata=SOMETIMES)  # true: a stopped run goes on
    # The person's steering message a resume goes on with, as the model reads it.
    steer: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class RunRecord(RunStarted):
    """A run this daemon ran (`counterfoil/receipts`' `runs`)."""

    startedAt: str
    endedAt: str | None
    reason: str | None
    verdict: Verdict | None


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class FinalAnswer:
    final: str


@dataclass(frozen=True, kw_only=True)
class ShownToModel:
    """What the model read of a result too long to show whole: `text` (previews of its head
    and tail, and how to read the rest), naming the artifact `artifactId` of `byteCount` bytes."""

    text: str
    artifactId: str
    byteCount: int


@dataclass(frozen=True, kw_only=True)
class AgentEvent(StepRecord):
    step: int
    response: str
    action: ToolCall | FinalAnswer | None  # null: the response did not parse
    result: str | None
    runId: str | None
    modelNote: str | None = None  # a model server's remark on this step's response
    protectedBy: str | None = None  # the protected pattern a refused step matched
    # What the model read instead of `result`, when `result` was too long to show it whole.
    shownToModel: ShownToModel | None = field(default=None, metadata=SOMETIMES)
    # Why the response gave no action (it did not parse, a tool not enabled, the same action
    # again), in the daemon's words; sent only when there is no action.
    noAction: str | None = field(default=None, metadata=SOMETIMES)
    # For the person only: the setting that enables a tool the step found not enabled.
    enabledBy: str | None = None
    # The tool the response asked for that this run has off (`edit_file`), sent only then: the
    # editor names it from here, never from `result`'s words.
    notEnabled: str | None = field(default=None, metadata=SOMETIMES)
    # A step taken before this part of a resumed run, retold from the run's record as the
    # resume begins ("before the interruption", "before the pause"); absent for a step now.
    earlier: str | None = field(default=None, metadata=SOMETIMES)
    # The file Counterfoil read for the model before its first step (step 0, no response):
    # the model did not ask for it.
    readForModel: str | None = field(default=None, metadata=SOMETIMES)
    # A final answer not taken as the run's end (`checkFinalAnswer`): what the model was told
    # instead, the run's record against its answer. The run goes on.
    finalHeld: str | None = field(default=None, metadata=SOMETIMES)
    # A final answer taken as the run's end without the check (`checkFinalAnswer` on): why
    # ("not checked: a change was rejected in this run …").
    finalUnchecked: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class RunStateNotice:
    runId: str
    state: RunStateName
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class RunActivity:
    """What the model is doing for a run, in the daemon's words, from the run's start: loading
    it (the file, and what was done: an import, a load), then each step's prefill (tokens of the
    total) and generation, a rate only over a span long enough to mean one."""

    runId: str
    phase: ActivityPhase
    step: int | None  # null while the model loads
    message: str


@dataclass(frozen=True, kw_only=True)
class RuleApproved:
    """An effect the person's approval rule approved without asking, sent as the rule decides
    it (before the effect is done), so the person sees it as it happens and can still stop the
    run: the call as a question would have shown it, and the rule that decided."""

    runId: str | None
    approved: ConfirmParams  # what the question would have asked
    rule: str  # the rule's text (its canonical JSON), as the receipt names it
    ruleIndex: int  # its place in the rule set in force, from 1
    ruleWords: str  # the rule in a few words: "allow commands starting python -m pytest"
    rulesSha256: str  # the digest of the rule set in force


@dataclass(frozen=True, kw_only=True)
class ApprovalState:
    """Where one call's question stands, sent by the daemon at each change (asked, asked again
    after a resume, withdrawn, answered, denied): the one state the run panel, the
    notifications and the receipts tree show, so none of them guesses it from its own events."""

    runId: str | None
    toolCallId: str
    state: ApprovalStateName
    why: str | None  # the daemon's words for it: "withdrawn for a pause; Resume asks again"


@dataclass(frozen=True, kw_only=True)
class ModelText:
    runId: str
    step: int
    text: str
    thinking: bool

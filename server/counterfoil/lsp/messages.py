"""Every message of the daemon protocol, written once: each request's params and result and
each notification as a dataclass whose fields are the wire's names.

The daemon builds its answers from these (`wire` turns one into JSON data);
`extension/src/daemon/protocol.generated.ts` is generated from them (`python -m
counterfoil.lsp.typescript`), and tests fail when that file or docs/protocol.md disagrees.
A field with `metadata=SOMETIMES` is left out of the JSON when it is None; every other field is
always sent, `null` included.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .branch_messages import (  # noqa: F401 - the generator and the shape tests read them here
    BranchCheckResult,
    BranchesParams,
    BranchesResult,
    BranchInfo,
    BranchState,
    SelectBranchParams,
    SelectBranchResult,
    SelectionOutcome,
)

EffectState = Literal["approved", "rejected", "refused", "failed"]
Validation = Literal["passed", "failed", "not_run", "stale"]
RunStateName = Literal["running", "stopping", "cancelled", "ended"]
ModelStateName = Literal["unloaded", "loading", "ready", "generating", "error"]
DownloadState = Literal["downloading", "done", "cancelled", "failed"]


SOMETIMES = {"sometimes": True}  # a field sent only when it has a value


def wire(message: Any) -> Any:
    """A message as the JSON data the daemon sends (dataclasses to objects, tuples to lists)."""
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        shown: dict[str, Any] = {}
        for item in dataclasses.fields(message):
            value = getattr(message, item.name)
            if value is None and item.metadata.get("sometimes"):
                continue
            shown[item.name] = wire(value)
        return shown
    if isinstance(message, (list, tuple)):
        return [wire(item) for item in message]
    if isinstance(message, dict):
        return {key: wire(value) for key, value in message.items()}
    return message


# LSP's own shapes, for the edit preview (workspace/applyEdit style)


@dataclass(frozen=True, kw_only=True)
class Position:
    line: int
    character: int  # UTF-16 code units, as LSP counts them


@dataclass(frozen=True, kw_only=True)
class Range:
    start: Position
    end: Position


@dataclass(frozen=True, kw_only=True)
class TextEdit:
    range: Range
    newText: str


@dataclass(frozen=True, kw_only=True)
class VersionedDocument:
    uri: str
    version: int | None = None


@dataclass(frozen=True, kw_only=True)
class TextDocumentEdit:
    textDocument: VersionedDocument
    edits: list[TextEdit]


@dataclass(frozen=True, kw_only=True)
class CreateFile:
    kind: Literal["create"] = "create"
    uri: str


@dataclass(frozen=True, kw_only=True)
class WorkspaceEdit:
    documentChanges: list[TextDocumentEdit | CreateFile]


# Requests from the client


@dataclass(frozen=True, kw_only=True)
class RunParams:
    METHOD: ClassVar[str] = "counterfoil/run"
    goal: str


@dataclass(frozen=True, kw_only=True)
class FollowUpParams:
    METHOD: ClassVar[str] = "counterfoil/followUp"
    text: str


@dataclass(frozen=True, kw_only=True)
class RunValidationParams:
    METHOD: ClassVar[str] = "counterfoil/runValidation"
    argv: list[str]


@dataclass(frozen=True, kw_only=True)
class RevertParams:
    METHOD: ClassVar[str] = "counterfoil/revert"
    toolCallId: str


@dataclass(frozen=True, kw_only=True)
class ObjectParams:
    METHOD: ClassVar[str] = "counterfoil/object"
    sha256: str


@dataclass(frozen=True, kw_only=True)
class ModelParams:
    """`counterfoil/modelRuntime` and `counterfoil/downloadModel`: the model, else the setting."""

    model: str | None = field(default=None, metadata=SOMETIMES)


# Results


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
    modelUsage: str | None = field(default=None, metadata=SOMETIMES)


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
class Approval:
    decision: str | None = field(default=None, metadata=SOMETIMES)
    by: str | None = field(default=None, metadata=SOMETIMES)
    via: str | None = field(default=None, metadata=SOMETIMES)
    shown_sha256: str | None = field(default=None, metadata=SOMETIMES)
    approved_sha256: str | None = field(default=None, metadata=SOMETIMES)
    modified: bool | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class Receipt:
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
    # What a command changed in the tree, what changed beside it, how it was confined, and a
    # reviewed command's answer (see docs/protocol.md).
    tree_changes: Any = field(default=None, metadata=SOMETIMES)
    tree_drift: Any = field(default=None, metadata=SOMETIMES)
    sandbox: Any = field(default=None, metadata=SOMETIMES)
    review: Any = field(default=None, metadata=SOMETIMES)


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
    METHOD: ClassVar[str] = "counterfoil/runStarted"
    runId: str
    conversationId: str
    goal: str  # the run's goal or the follow-up's text
    followUp: bool
    agentsFile: AgentsFileRecord | None  # the root's AGENTS.md the run's prompt holds, if any


@dataclass(frozen=True, kw_only=True)
class RunRecord(RunStarted):
    """A run this daemon ran (`counterfoil/receipts`' `runs`)."""

    startedAt: str
    endedAt: str | None
    reason: str | None
    verdict: Verdict | None


@dataclass(frozen=True, kw_only=True)
class ReceiptsResult:
    receipts: list[Receipt]
    logPath: str | None
    error: str | None
    runs: list[RunRecord]


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
class ObjectResult:
    sha256: str
    found: bool
    text: str | None  # the bytes decoded as UTF-8, at most 1 MiB
    bytes: int
    truncated: bool


@dataclass(frozen=True, kw_only=True)
class ToolArgument:
    name: str
    type: str
    required: bool


@dataclass(frozen=True, kw_only=True)
class ToolInfo:
    name: str
    effect: bool
    enabled: bool
    arguments: list[ToolArgument]
    example: dict[str, Any]  # the action the prompt shows for it


@dataclass(frozen=True, kw_only=True)
class ModelState:
    METHOD: ClassVar[str] = "counterfoil/modelState"
    state: ModelStateName
    model: str | None
    endpoint: str | None  # the model server's base URL; null for a model in the daemon
    message: str | None
    tokens: int | None
    tokensPerSecond: float | None
    promptTokens: int | None


@dataclass(frozen=True, kw_only=True)
class ConversationStatus:
    conversationId: str
    runId: str
    goal: str
    turns: int


@dataclass(frozen=True, kw_only=True)
class StatusResult:
    root: str | None
    model: str
    modelState: ModelStateName
    allowWrites: bool
    allowedCommands: list[list[str]]
    availableTools: list[str]
    tools: list[ToolInfo]
    receiptLog: str | None
    running: bool
    conversation: ConversationStatus | None
    modelOnDisk: bool | None  # null: not a valid name
    modelDownloadBytes: int | None  # bytes still to fetch, once known


@dataclass(frozen=True, kw_only=True)
class ModelRuntimeResult:
    model: str
    extra: str | None
    missing: list[str]
    python: str
    command: list[str] | None
    unavailable: str | None  # why no install can make the model run here
    # Sent when something is missing: whether the model's files can be had at all.
    modelAvailable: bool | None = field(default=None, metadata=SOMETIMES)
    modelDetail: str | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class DownloadModelResult:
    ok: bool
    path: str


# The confirm request (server to client)


@dataclass(frozen=True, kw_only=True)
class EditPreview:
    """The whole proposed file, and the same change as an LSP WorkspaceEdit whose edits,
    applied to `baseText`, give exactly the bytes of `proposedSha256`."""

    kind: Literal["edit"] = "edit"
    path: str
    uri: str
    removesFile: bool
    baseSha256: str | None  # null for a new file, which must not exist
    proposedSha256: str | None  # null when the file is removed
    proposedText: str | None
    baseText: str | None
    edit: WorkspaceEdit | None
    reverts: str | None = field(
        default=None, metadata=SOMETIMES
    )  # the call whose effect this undoes
    # Folders the write creates (outermost first), or a revert removes when left empty.
    newFolders: list[str] | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class CommandPreview:
    kind: Literal["command"] = "command"
    argv: list[str]
    cwd: str
    timeoutSeconds: float


@dataclass(frozen=True, kw_only=True)
class ChangedFile:
    path: str
    uri: str
    expectedSha256: str | None
    contentSha256: str | None
    removesFile: bool
    currentText: str | None
    proposedText: str | None


@dataclass(frozen=True, kw_only=True)
class LeftAlone:
    path: str
    why: str


@dataclass(frozen=True, kw_only=True)
class CommandRan:
    """How a reviewed command ran: its argv, how it ended, and its sandbox."""

    argv: list[str]
    exitStatus: int | None  # null after a timeout or a stop
    timedOut: bool
    mode: str
    mechanism: str
    network: bool


@dataclass(frozen=True, kw_only=True)
class ChangeSetPreview:
    """A command's reviewed changes to the tree, or a command's revert, accepted as a whole."""

    kind: Literal["changes"] = "changes"
    reverts: str | None
    files: list[ChangedFile]
    leftAlone: list[LeftAlone]
    ran: CommandRan | None = field(default=None, metadata=SOMETIMES)  # review mode only


@dataclass(frozen=True, kw_only=True)
class ConfirmParams:
    METHOD: ClassVar[str] = "counterfoil/confirm"
    toolCallId: str
    tool: str
    arguments: dict[str, Any]
    preview: EditPreview | CommandPreview | ChangeSetPreview


@dataclass(frozen=True, kw_only=True)
class ConfirmResult:
    """Only `approved: true` approves. `text`: the file the person approved instead of the
    proposal; `reason`: why the person said No, for the model."""

    approved: bool
    text: str | None = field(default=None, metadata=SOMETIMES)
    reason: str | None = field(default=None, metadata=SOMETIMES)
    # With a No: the person edited the proposal, and the model is asked to propose again.
    repropose: bool | None = field(default=None, metadata=SOMETIMES)


# Notifications


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class FinalAnswer:
    final: str


@dataclass(frozen=True, kw_only=True)
class AgentEvent(StepRecord):
    METHOD: ClassVar[str] = "counterfoil/event"
    step: int
    response: str
    action: ToolCall | FinalAnswer | None  # null: the response did not parse
    result: str | None
    runId: str | None
    modelNote: str | None = None  # a model server's remark on this step's response
    protectedBy: str | None = None  # the protected pattern a refused step matched


@dataclass(frozen=True, kw_only=True)
class RunStateNotice:
    METHOD: ClassVar[str] = "counterfoil/runState"
    runId: str
    state: RunStateName
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class ModelText:
    METHOD: ClassVar[str] = "counterfoil/modelText"
    runId: str
    step: int
    text: str
    thinking: bool


@dataclass(frozen=True, kw_only=True)
class DownloadProgress:
    METHOD: ClassVar[str] = "counterfoil/download"
    model: str
    bytes: int
    total: int
    rate: float | None
    etaSeconds: float | None
    state: DownloadState


# Which message each method carries: requests as (params, result), notifications as one.
REQUESTS: dict[str, tuple[type | None, type]] = {
    "counterfoil/run": (RunParams, RunResult),
    "counterfoil/followUp": (FollowUpParams, RunResult),
    "counterfoil/runValidation": (RunValidationParams, ValidationResult),
    "counterfoil/revert": (RevertParams, ValidationResult),
    "counterfoil/receipts": (None, ReceiptsResult),
    "counterfoil/verifyReceipts": (None, VerifyResult),
    "counterfoil/status": (None, StatusResult),
    "counterfoil/object": (ObjectParams, ObjectResult),
    "counterfoil/modelRuntime": (ModelParams, ModelRuntimeResult),
    "counterfoil/downloadModel": (ModelParams, DownloadModelResult),
    "counterfoil/confirm": (ConfirmParams, ConfirmResult),
    "counterfoil/branches": (BranchesParams, BranchesResult),
    "counterfoil/selectBranch": (SelectBranchParams, SelectBranchResult),
}
NOTIFICATIONS: dict[str, type] = {
    "counterfoil/event": AgentEvent,
    "counterfoil/receipt": Receipt,
    "counterfoil/modelState": ModelState,
    "counterfoil/runStarted": RunStarted,
    "counterfoil/runState": RunStateNotice,
    "counterfoil/modelText": ModelText,
    "counterfoil/download": DownloadProgress,
}

"""Every message of the daemon protocol, written once: each request's params and result and
each notification as a dataclass whose fields are the wire's names, grouped by concern, and
how the daemon serves each request (`Runs`, one per row of `REQUESTS`).

The daemon builds its answers from these (`wire` turns one into JSON data);
`extension/src/daemon/protocol.generated.ts` is generated from them (`python -m
counterfoil.lsp.typescript`), and tests fail when that file or docs/protocol.md disagrees.
A field with `metadata=SOMETIMES` is left out of the JSON when it is None; every other field is
always sent, `null` included.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..receipt_fields import (  # the receipt's evidence, declared once in the core
    ApprovalRecord,
    JsonValue,
    LeftOutChangeRecord,
    McpRecord,
    ModelRecord,
    ReceiptEvidence,
    ReviewRecord,
    SandboxRecord,
    TreeChangeRecord,
    TreeChangesRecord,
    TreeDriftRecord,
    field_annotations,
)
from .branches import (  # the branch requests' messages, in their own module
    BranchCheckResult,
    BranchesParams,
    BranchesResult,
    BranchInfo,
    BranchState,
    SelectBranchParams,
    SelectBranchResult,
    SelectionOutcome,
)
from .folder_settings import (
    ConfirmFolderGrantsParams,
    FolderSettingsResult,
    FolderSettingValue,
    RefusedSettingValue,
)
from .receipts import (
    ExportEvidenceParams,
    ExportEvidenceResult,
    LoggedReceipt,
    ObjectParams,
    ObjectResult,
    Receipt,
    VerifyResult,
)
from .receipts_tree import ReceiptsResult
from .review import (
    ChangedFile,
    ChangeSetPreview,
    CommandPreview,
    CommandRan,
    CommandRunsAs,
    ConfirmParams,
    ConfirmResult,
    CreateFile,
    EditPreview,
    LeftAlone,
    McpCallPreview,
    McpDefinitionPreview,
    McpServerShown,
    Position,
    Range,
    TextDocumentEdit,
    TextEdit,
    VersionedDocument,
    WorkspaceEdit,
)
from .runs import (
    AgentEvent,
    AgentsFileRecord,
    ApprovalState,
    FileChanged,
    FinalAnswer,
    FollowUpParams,
    ModelText,
    RevertParams,
    RuleApproved,
    RunActivity,
    RunParams,
    RunRecord,
    RunResult,
    RunStarted,
    RunStateNotice,
    RunValidationParams,
    ShownToModel,
    StepRecord,
    ToolCall,
    ValidationResult,
    Verdict,
    VerdictEffect,
)
from .sessions import (
    Decision,
    DiscardParams,
    DiscardResult,
    FileWritten,
    InspectParams,
    InspectResult,
    PauseResult,
    PendingProposal,
    ResumeParams,
    SessionInfo,
    SessionsResult,
    StoredRunRecord,
)
from .status import (
    ConversationStatus,
    DownloadModelResult,
    DownloadProgress,
    ModelParams,
    ModelRuntimeResult,
    ModelState,
    StatusResult,
    ToolArgument,
    ToolInfo,
)
from .wire import (
    SOMETIMES,
    ActivityPhase,
    ApprovalStateName,
    DownloadState,
    EffectState,
    ModelStateName,
    RunStateName,
    SessionStateName,
    Validation,
    wire,
)


def field_types(cls: type) -> dict[str, Any]:
    """A message's field types, its names resolved across the package (one module's
    annotations name another's messages), `JsonValue` kept whole."""
    return field_annotations(cls, globals())


class Runs(Enum):
    """How the daemon serves a request: where its work runs and which requests it waits for.
    Each served row of `REQUESTS` names one; the daemon reads it there (`lsp/request_rules.py`),
    so no handler decides it.

    - `ON_LOOP`: answered on the event loop, without a thread, from what the daemon holds;
      it waits for nothing.
    - `OFF_LOOP`: on a worker thread, beside any other request (it reads the disk).
    - `ONE_AT_A_TIME`: an operation on the workspace, on its own worker thread, refused
      (`-32001`) while another operation goes. It is started on the event loop, in the order it
      came, so a `pause` sent after it finds it; a cancel stops it and it still answers with
      its result.
    - `ONE_AT_A_TIME_CHECKED_OFF_LOOP`: as `ONE_AT_A_TIME`, but started on a worker thread,
      because its checks read the disk first (a resume's checkpoint).
    - `ONE_DOWNLOAD_AT_A_TIME`: a model download on its own worker thread, refused (`-32004`)
      while another model downloads; a cancel stops it at the next chunk.
    """

    ON_LOOP = "on_loop"
    OFF_LOOP = "off_loop"
    ONE_AT_A_TIME = "one_at_a_time"
    ONE_AT_A_TIME_CHECKED_OFF_LOOP = "one_at_a_time_checked_off_loop"
    ONE_DOWNLOAD_AT_A_TIME = "one_download_at_a_time"


@dataclass(frozen=True)
class Request:
    """A request's params (None: it takes `{}`), its result, and how the daemon serves it
    (`runs`); `to_client`: the daemon asks it, so it has no rule."""

    params: type | None
    result: type
    runs: Runs | None = None
    to_client: bool = False

    def __post_init__(self) -> None:
        if (self.runs is None) != self.to_client:
            raise ValueError("a request the daemon serves names its rule; one it asks, none")


# The rules by their own names, so that each row of REQUESTS stays one line
ON_LOOP, OFF_LOOP = Runs.ON_LOOP, Runs.OFF_LOOP
ONE_AT_A_TIME, ONE_AT_A_TIME_CHECKED_OFF_LOOP = (
    Runs.ONE_AT_A_TIME,
    Runs.ONE_AT_A_TIME_CHECKED_OFF_LOOP,
)
ONE_DOWNLOAD_AT_A_TIME = Runs.ONE_DOWNLOAD_AT_A_TIME

# Every method, written once: which message each carries and how the daemon serves it. The
# daemon registers its handlers from REQUESTS (each bound in `lsp/handlers.py`), the
# extension's typed request map is generated from it.
# fmt: off
REQUESTS: dict[str, Request] = {
    "counterfoil/run": Request(RunParams, RunResult, ONE_AT_A_TIME),
    "counterfoil/followUp": Request(FollowUpParams, RunResult, ONE_AT_A_TIME),
    "counterfoil/runValidation": Request(RunValidationParams, ValidationResult, ONE_AT_A_TIME),
    "counterfoil/revert": Request(RevertParams, ValidationResult, ONE_AT_A_TIME),
    "counterfoil/receipts": Request(None, ReceiptsResult, OFF_LOOP),
    "counterfoil/verifyReceipts": Request(None, VerifyResult, OFF_LOOP),
    "counterfoil/exportEvidence": Request(ExportEvidenceParams, ExportEvidenceResult, OFF_LOOP),
    "counterfoil/status": Request(None, StatusResult, ON_LOOP),
    "counterfoil/object": Request(ObjectParams, ObjectResult, OFF_LOOP),
    "counterfoil/modelRuntime": Request(ModelParams, ModelRuntimeResult, OFF_LOOP),
    "counterfoil/downloadModel": Request(ModelParams, DownloadModelResult, ONE_DOWNLOAD_AT_A_TIME),
    "counterfoil/confirm": Request(ConfirmParams, ConfirmResult, to_client=True),
    "counterfoil/sessions": Request(None, SessionsResult, OFF_LOOP),
    "counterfoil/inspect": Request(InspectParams, InspectResult, OFF_LOOP),
    "counterfoil/resume": Request(ResumeParams, RunResult, ONE_AT_A_TIME_CHECKED_OFF_LOOP),
    "counterfoil/pause": Request(None, PauseResult, ON_LOOP),
    "counterfoil/discard": Request(DiscardParams, DiscardResult, OFF_LOOP),
    "counterfoil/branches": Request(BranchesParams, BranchesResult, OFF_LOOP),
    "counterfoil/selectBranch": Request(SelectBranchParams, SelectBranchResult, ONE_AT_A_TIME),
    "counterfoil/folderSettings": Request(None, FolderSettingsResult, ON_LOOP),
    "counterfoil/confirmFolderGrants": Request(ConfirmFolderGrantsParams, FolderSettingsResult, OFF_LOOP),
}
# fmt: on
NOTIFICATIONS: dict[str, type] = {
    "counterfoil/event": AgentEvent,
    "counterfoil/receipt": Receipt,
    "counterfoil/modelState": ModelState,
    "counterfoil/runStarted": RunStarted,
    "counterfoil/runState": RunStateNotice,
    "counterfoil/modelText": ModelText,
    "counterfoil/runActivity": RunActivity,
    "counterfoil/ruleApproved": RuleApproved,
    "counterfoil/approvalState": ApprovalState,
    "counterfoil/download": DownloadProgress,
    "counterfoil/folderSettingsChanged": FolderSettingsResult,
}
_NOTIFIED_AS = {message: method for method, message in NOTIFICATIONS.items()}


def method_of(message: type) -> str:
    """The method a notification's message goes out as."""
    return _NOTIFIED_AS[message]


def asked_as(params: type) -> str:
    """The method of a request the daemon sends the client (`counterfoil/confirm`)."""
    return next(m for m, r in REQUESTS.items() if r.to_client and r.params is params)


def notice(message: Any) -> tuple[str, Any]:
    """A notification as (method, JSON data), from its message alone."""
    return method_of(type(message)), wire(message)


__all__ = [
    "NOTIFICATIONS",
    "REQUESTS",
    "SOMETIMES",
    "ActivityPhase",
    "AgentEvent",
    "AgentsFileRecord",
    "ApprovalRecord",
    "ApprovalState",
    "ApprovalStateName",
    "BranchCheckResult",
    "BranchInfo",
    "BranchState",
    "BranchesParams",
    "BranchesResult",
    "ChangeSetPreview",
    "ChangedFile",
    "CommandPreview",
    "CommandRan",
    "CommandRunsAs",
    "ConfirmFolderGrantsParams",
    "ConfirmParams",
    "ConfirmResult",
    "ConversationStatus",
    "CreateFile",
    "Decision",
    "DiscardParams",
    "DiscardResult",
    "DownloadModelResult",
    "DownloadProgress",
    "DownloadState",
    "EditPreview",
    "EffectState",
    "ExportEvidenceParams",
    "ExportEvidenceResult",
    "FileChanged",
    "FileWritten",
    "FinalAnswer",
    "FolderSettingValue",
    "FolderSettingsResult",
    "FollowUpParams",
    "InspectParams",
    "InspectResult",
    "JsonValue",
    "LeftAlone",
    "LeftOutChangeRecord",
    "LoggedReceipt",
    "McpCallPreview",
    "McpDefinitionPreview",
    "McpRecord",
    "McpServerShown",
    "ModelParams",
    "ModelRecord",
    "ModelRuntimeResult",
    "ModelState",
    "ModelStateName",
    "ModelText",
    "ObjectParams",
    "ObjectResult",
    "PauseResult",
    "PendingProposal",
    "Position",
    "Range",
    "Receipt",
    "ReceiptEvidence",
    "ReceiptsResult",
    "RefusedSettingValue",
    "Request",
    "ResumeParams",
    "RevertParams",
    "ReviewRecord",
    "RuleApproved",
    "RunActivity",
    "RunParams",
    "RunRecord",
    "RunResult",
    "RunStarted",
    "RunStateName",
    "RunStateNotice",
    "RunValidationParams",
    "Runs",
    "SandboxRecord",
    "SelectBranchParams",
    "SelectBranchResult",
    "SelectionOutcome",
    "SessionInfo",
    "SessionStateName",
    "SessionsResult",
    "ShownToModel",
    "StatusResult",
    "StepRecord",
    "StoredRunRecord",
    "TextDocumentEdit",
    "TextEdit",
    "ToolArgument",
    "ToolCall",
    "ToolInfo",
    "TreeChangeRecord",
    "TreeChangesRecord",
    "TreeDriftRecord",
    "Validation",
    "ValidationResult",
    "Verdict",
    "VerdictEffect",
    "VerifyResult",
    "VersionedDocument",
    "WorkspaceEdit",
    "asked_as",
    "field_types",
    "method_of",
    "notice",
    "wire",
]

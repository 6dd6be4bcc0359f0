"""Every message of the daemon protocol, written once: each request's params and result and
each notification as a dataclass whose fields are the wire's names, grouped by concern.

The daemon builds its answers from these (`wire` turns one into JSON data);
`extension/src/daemon/protocol.generated.ts` is generated from them (`python -m
counterfoil.lsp.typescript`), and tests fail when that file or docs/protocol.md disagrees.
A field with `metadata=SOMETIMES` is left out of the JSON when it is None; every other field is
always sent, `null` included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..receipts.evidence import (  # the receipt's evidence, declared once in the core
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
    FileChanged,
    FinalAnswer,
    FollowUpParams,
    ModelText,
    RevertParams,
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


@dataclass(frozen=True)
class Request:
    """A request's params (None: it takes `{}`) and result; `to_client`: the daemon asks it."""

    params: type | None
    result: type
    to_client: bool = False


# Every method, written once: which message each carries. The daemon registers its handlers
# from REQUESTS, the extension's typed request map is generated from it.
REQUESTS: dict[str, Request] = {
    "counterfoil/run": Request(RunParams, RunResult),
    "counterfoil/followUp": Request(FollowUpParams, RunResult),
    "counterfoil/runValidation": Request(RunValidationParams, ValidationResult),
    "counterfoil/revert": Request(RevertParams, ValidationResult),
    "counterfoil/receipts": Request(None, ReceiptsResult),
    "counterfoil/verifyReceipts": Request(None, VerifyResult),
    "counterfoil/exportEvidence": Request(ExportEvidenceParams, ExportEvidenceResult),
    "counterfoil/status": Request(None, StatusResult),
    "counterfoil/object": Request(ObjectParams, ObjectResult),
    "counterfoil/modelRuntime": Request(ModelParams, ModelRuntimeResult),
    "counterfoil/downloadModel": Request(ModelParams, DownloadModelResult),
    "counterfoil/confirm": Request(ConfirmParams, ConfirmResult, to_client=True),
    "counterfoil/sessions": Request(None, SessionsResult),
    "counterfoil/inspect": Request(InspectParams, InspectResult),
    "counterfoil/resume": Request(ResumeParams, RunResult),
    "counterfoil/pause": Request(None, PauseResult),
    "counterfoil/discard": Request(DiscardParams, DiscardResult),
    "counterfoil/branches": Request(BranchesParams, BranchesResult),
    "counterfoil/selectBranch": Request(SelectBranchParams, SelectBranchResult),
    "counterfoil/folderSettings": Request(None, FolderSettingsResult),
    "counterfoil/confirmFolderGrants": Request(ConfirmFolderGrantsParams, FolderSettingsResult),
}
NOTIFICATIONS: dict[str, type] = {
    "counterfoil/event": AgentEvent,
    "counterfoil/receipt": Receipt,
    "counterfoil/modelState": ModelState,
    "counterfoil/runStarted": RunStarted,
    "counterfoil/runState": RunStateNotice,
    "counterfoil/modelText": ModelText,
    "counterfoil/runActivity": RunActivity,
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
    "Request",
    "ResumeParams",
    "RevertParams",
    "ReviewRecord",
    "RunActivity",
    "RunParams",
    "RunRecord",
    "RunResult",
    "RunStarted",
    "RunStateName",
    "RunStateNotice",
    "RunValidationParams",
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

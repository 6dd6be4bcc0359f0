"""Every message of the daemon protocol, written once: each request's params and result and
each notification as a dataclass whose fields are the wire's names, grouped by concern.

The daemon builds its answers from these (`wire` turns one into JSON data);
`extension/src/daemon/protocol.generated.ts` is generated from them (`python -m
counterfoil.lsp.typescript`), and tests fail when that file or docs/protocol.md disagrees.
A field with `metadata=SOMETIMES` is left out of the JSON when it is None; every other field is
always sent, `null` included.
"""

from __future__ import annotations

import sys
import typing
from typing import Any

from ..branch_messages import (  # the branch requests' messages, in their own module
    BranchCheckResult,
    BranchesParams,
    BranchesResult,
    BranchInfo,
    BranchState,
    SelectBranchParams,
    SelectBranchResult,
    SelectionOutcome,
)
from .receipts import (
    Approval,
    ExportEvidenceParams,
    ExportEvidenceResult,
    ObjectParams,
    ObjectResult,
    Receipt,
    ReceiptsResult,
    VerifyResult,
)
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
    annotations name another's messages)."""
    namespace = {**vars(sys.modules[cls.__module__]), **globals()}
    return typing.get_type_hints(cls, namespace)


# Which message each method carries: requests as (params, result), notifications as one.
REQUESTS: dict[str, tuple[type | None, type]] = {
    "counterfoil/run": (RunParams, RunResult),
    "counterfoil/followUp": (FollowUpParams, RunResult),
    "counterfoil/runValidation": (RunValidationParams, ValidationResult),
    "counterfoil/revert": (RevertParams, ValidationResult),
    "counterfoil/receipts": (None, ReceiptsResult),
    "counterfoil/verifyReceipts": (None, VerifyResult),
    "counterfoil/exportEvidence": (ExportEvidenceParams, ExportEvidenceResult),
    "counterfoil/status": (None, StatusResult),
    "counterfoil/object": (ObjectParams, ObjectResult),
    "counterfoil/modelRuntime": (ModelParams, ModelRuntimeResult),
    "counterfoil/downloadModel": (ModelParams, DownloadModelResult),
    "counterfoil/confirm": (ConfirmParams, ConfirmResult),
    "counterfoil/sessions": (None, SessionsResult),
    "counterfoil/inspect": (InspectParams, InspectResult),
    "counterfoil/resume": (ResumeParams, RunResult),
    "counterfoil/pause": (None, PauseResult),
    "counterfoil/discard": (DiscardParams, DiscardResult),
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

__all__ = [
    "NOTIFICATIONS",
    "REQUESTS",
    "SOMETIMES",
    "AgentEvent",
    "AgentsFileRecord",
    "Approval",
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
    "FollowUpParams",
    "InspectParams",
    "InspectResult",
    "LeftAlone",
    "ModelParams",
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
    "ReceiptsResult",
    "ResumeParams",
    "RevertParams",
    "RunParams",
    "RunRecord",
    "RunResult",
    "RunStarted",
    "RunStateName",
    "RunStateNotice",
    "RunValidationParams",
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
    "Validation",
    "ValidationResult",
    "Verdict",
    "VerdictEffect",
    "VerifyResult",
    "VersionedDocument",
    "WorkspaceEdit",
    "field_types",
    "wire",
]

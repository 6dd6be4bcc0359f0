"""Counterfoil: a coding agent that proposes one exact effect at a time and keeps a receipt of each.

The core (actions, policy, workspace, receipts, loop) is plain Python; the model loop, the CLI
and the language-server daemon are adapters around it and are imported only when used.

The names below are imported when first used (PEP 562), so a process that needs one part (the
daemon answering `initialize`, the CLI parsing its flags) does not load every module, and
importing the package never loads a model framework (`KvPrefixGenerator` runs on MLX).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"  # the one version number (pyproject and package.json read it)

if TYPE_CHECKING:
    from .actions import Action, FinalAction, ToolAction, parse_action
    from .branches.branching import BranchOutcome, run_branch, select_branch
    from .context.compaction import CompactionResult, compact_completed_interactions
    from .context.evidence import ArtifactRef, ArtifactStore, BoundedEvidenceWorkspace
    from .context.prompt import build_system_prompt
    from .errors import AgentError
    from .evaluation import (
        EvaluationCase,
        EvaluationCheck,
        EvaluationReport,
        FileExpectation,
        ReceiptExpectation,
        ResultExpectation,
        evaluate_run,
    )
    from .gate.approval import ApprovalDecision
    from .gate.policy import ToolPolicy
    from .gate.workspace import Workspace
    from .loop import AgentEvent, AgentLimits, AgentRun, initial_messages, run_agent
    from .model_state import ModelCheckpoint, PrefixReuse
    from .proposals import CommandProposal, EditProposal, ToolProposal
    from .receipts import (
        EffectReceipt,
        ReceiptLogError,
        ReceiptLogReport,
        ReceiptStore,
        verify_receipt_log,
    )
    from .sessions import (
        AgentCheckpoint,
        AgentStatus,
        create_checkpoint,
        inspect_checkpoint,
        resume_agent,
        resume_with_steering,
        run_to_checkpoint,
    )

_EXPORTS = {
    "Action": "actions",
    "AgentCheckpoint": "sessions",
    "AgentError": "errors",
    "AgentEvent": "loop",
    "AgentLimits": "loop",
    "AgentRun": "loop",
    "AgentStatus": "sessions",
    "ApprovalDecision": "gate.approval",
    "ArtifactRef": "context.evidence",
    "ArtifactStore": "context.evidence",
    "BoundedEvidenceWorkspace": "context.evidence",
    "BranchOutcome": "branches.branching",
    "CommandProposal": "proposals",
    "CompactionResult": "context.compaction",
    "EditProposal": "proposals",
    "EffectReceipt": "receipts",
    "EvaluationCase": "evaluation",
    "EvaluationCheck": "evaluation",
    "EvaluationReport": "evaluation",
    "FileExpectation": "evaluation",
    "FinalAction": "actions",
    "KvPrefixGenerator": "models",
    "ModelCheckpoint": "model_state",
    "PrefixReuse": "model_state",
    "ReceiptExpectation": "evaluation",
    "ReceiptLogError": "receipts",
    "ReceiptLogReport": "receipts",
    "ReceiptStore": "receipts",
    "ResultExpectation": "evaluation",
    "ToolAction": "actions",
    "ToolPolicy": "gate.policy",
    "ToolProposal": "proposals",
    "Workspace": "gate.workspace",
    "build_system_prompt": "context.prompt",
    "compact_completed_interactions": "context.compaction",
    "create_checkpoint": "sessions",
    "evaluate_run": "evaluation",
    "initial_messages": "loop",
    "inspect_checkpoint": "sessions",
    "parse_action": "actions",
    "resume_agent": "sessions",
    "resume_with_steering": "sessions",
    "run_agent": "loop",
    "run_branch": "branches.branching",
    "run_to_checkpoint": "sessions",
    "select_branch": "branches.branching",
    "verify_receipt_log": "receipts",
}

__all__ = [
    "Action",
    "AgentCheckpoint",
    "AgentError",
    "AgentEvent",
    "AgentLimits",
    "AgentRun",
    "AgentStatus",
    "ApprovalDecision",
    "ArtifactRef",
    "ArtifactStore",
    "BoundedEvidenceWorkspace",
    "BranchOutcome",
    "CommandProposal",
    "CompactionResult",
    "EditProposal",
    "EffectReceipt",
    "EvaluationCase",
    "EvaluationCheck",
    "EvaluationReport",
    "FileExpectation",
    "FinalAction",
    "KvPrefixGenerator",
    "ModelCheckpoint",
    "PrefixReuse",
    "ReceiptExpectation",
    "ReceiptLogError",
    "ReceiptLogReport",
    "ReceiptStore",
    "ResultExpectation",
    "ToolAction",
    "ToolPolicy",
    "ToolProposal",
    "Workspace",
    "build_system_prompt",
    "compact_completed_interactions",
    "create_checkpoint",
    "evaluate_run",
    "initial_messages",
    "inspect_checkpoint",
    "parse_action",
    "resume_agent",
    "resume_with_steering",
    "run_agent",
    "run_branch",
    "run_to_checkpoint",
    "select_branch",
    "verify_receipt_log",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

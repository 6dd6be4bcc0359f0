"""Counterfoil: a coding agent that proposes one exact effect at a time and keeps a receipt of each.

The core (actions, policy, workspace, receipts, loop) is plain Python; the model loop, the CLI
and the language-server daemon are adapters around it and are imported only when used.
"""

from typing import Any

from .actions import Action, FinalAction, ToolAction, parse_action
from .approval import ApprovalDecision
from .branching import BranchOutcome, PrefixReuse, run_branch, select_branch
from .compaction import CompactionResult, compact_completed_interactions
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
from .evidence import ArtifactRef, ArtifactStore, BoundedEvidenceWorkspace
from .loop import AgentEvent, AgentLimits, AgentRun, initial_messages, run_agent
from .policy import ToolPolicy
from .prompt import build_system_prompt
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
    ModelCheckpoint,
    create_checkpoint,
    inspect_checkpoint,
    resume_agent,
    resume_with_steering,
    run_to_checkpoint,
)
from .workspace import Workspace

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
    """`KvPrefixGenerator` runs on MLX, an adapter: it is imported only when asked for, so
    importing the package never loads a model framework."""
    if name == "KvPrefixGenerator":
        from .models.kv_prefix import KvPrefixGenerator

        return KvPrefixGenerator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

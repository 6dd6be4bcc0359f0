"""Counterfoil: a coding agent that proposes one exact effect at a time and keeps a receipt of each.

The core (actions, policy, workspace, receipts, loop) is plain Python; the model loop, the CLI
and the language-server daemon are adapters around it and are imported only when used.
"""

from .actions import Action, FinalAction, ToolAction, parse_action
from .approval import ApprovalDecision
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
    "CommandProposal",
    "EditProposal",
    "EffectReceipt",
    "EvaluationCase",
    "EvaluationCheck",
    "EvaluationReport",
    "FileExpectation",
    "FinalAction",
    "ModelCheckpoint",
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
    "create_checkpoint",
    "evaluate_run",
    "initial_messages",
    "inspect_checkpoint",
    "parse_action",
    "resume_agent",
    "resume_with_steering",
    "run_agent",
    "run_to_checkpoint",
    "verify_receipt_log",
]

"""Counterfoil: a coding agent that proposes one exact effect at a time and keeps a receipt of each.

The core (actions, policy, workspace, receipts, loop) is plain Python; the model loop, the CLI
and the language-server daemon are adapters around it and are imported only when used.
"""

__version__ = "0.1.0"

from .actions import Action, FinalAction, ToolAction, parse_action
from .errors import AgentError
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
from .workspace import Workspace

__all__ = [
    "Action",
    "AgentError",
    "AgentEvent",
    "AgentLimits",
    "AgentRun",
    "CommandProposal",
    "EditProposal",
    "EffectReceipt",
    "FinalAction",
    "ReceiptLogError",
    "ReceiptLogReport",
    "ReceiptStore",
    "ToolAction",
    "ToolPolicy",
    "ToolProposal",
    "Workspace",
    "build_system_prompt",
    "initial_messages",
    "parse_action",
    "run_agent",
    "verify_receipt_log",
]

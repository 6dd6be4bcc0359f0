"""Counterfoil: a coding agent that proposes one exact effect at a time and keeps a receipt of each.

The core (actions, policy, workspace, receipts, loop) is plain Python; the model loop, the CLI
and the language-server daemon are adapters around it and are imported only when used.

The names below are imported when first used (PEP 562), so a process that needs one part (the
daemon answering `initialize`, the CLI parsing its flags) does not load every module.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .actions import Action, FinalAction, ToolAction, parse_action
    from .compaction import CompactionResult, compact_completed_interactions
    from .errors import AgentError
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
    from .workspace import Workspace

_EXPORTS = {
    "Action": "actions",
    "AgentError": "errors",
    "AgentEvent": "loop",
    "AgentLimits": "loop",
    "AgentRun": "loop",
    "ArtifactRef": "evidence",
    "ArtifactStore": "evidence",
    "BoundedEvidenceWorkspace": "evidence",
    "CommandProposal": "proposals",
    "CompactionResult": "compaction",
    "EditProposal": "proposals",
    "EffectReceipt": "receipts",
    "FinalAction": "actions",
    "ReceiptLogError": "receipts",
    "ReceiptLogReport": "receipts",
    "ReceiptStore": "receipts",
    "ToolAction": "actions",
    "ToolPolicy": "policy",
    "ToolProposal": "proposals",
    "Workspace": "workspace",
    "build_system_prompt": "prompt",
    "compact_completed_interactions": "compaction",
    "initial_messages": "loop",
    "parse_action": "actions",
    "run_agent": "loop",
    "verify_receipt_log": "receipts",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Action",
    "AgentError",
    "AgentEvent",
    "AgentLimits",
    "AgentRun",
    "ArtifactRef",
    "ArtifactStore",
    "BoundedEvidenceWorkspace",
    "CommandProposal",
    "CompactionResult",
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
    "compact_completed_interactions",
    "initial_messages",
    "parse_action",
    "run_agent",
    "verify_receipt_log",
]

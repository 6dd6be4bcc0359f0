"""What a workspace is set up with: one frozen value, given when it is built and never changed
after (what the run then records is `workspace_record.py`'s), and the callbacks it holds."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..actions import ToolAction
from ..commands.tree.snapshot import TreeLimits
from ..proposals import McpProposal, ToolProposal
from ..receipt_fields import ApprovalRecord
from ..search.scope import SearchLimits
from .rules import NO_RULES, RuleDecision, RuleSet

if TYPE_CHECKING:
    from ..mcp.toolbox import McpToolbox

ConfirmTool = Callable[[ToolAction], object]
ConfirmProposal = Callable[[ToolProposal], object]
ConfirmMcp = Callable[[McpProposal], object]
ApprovalChannel = Callable[[ToolProposal], str]  # the channel a receipt names, by proposal
# Told of each effect a rule approved, as it is approved (the terminal's line, the run panel's).
RuleApproved = Callable[[ToolProposal | McpProposal, RuleDecision], None]


@dataclass(frozen=True)
class WorkspaceSetup:
    """What a workspace is set up with: who is asked and how it is said, the hooks a kept run
    writes its intents through, the tools it offers and their limits. Fixed when the workspace
    is built; what the run then records is the `WorkspaceRecord`'s, apart from this."""

    # Who confirms: the course's per-call question, or each effect's proposal.
    confirm_tool: ConfirmTool | None = None
    confirm_proposal: ConfirmProposal | None = None
    run_id: str | None = None  # None: a fresh id
    approval_via: str = "cli"  # the approval channel each receipt names
    # When the channel depends on the proposal (a branch: its own copy's writes are the
    # fork's, its commands are asked on the terminal): the channel of each.
    via_of: ApprovalChannel | None = None
    # The files the model has already read (a follow-up's), by digest.
    read_digests: Mapping[str, str] | None = None
    # True while a record of the run is kept beside the log (counterfoil.sessions): its
    # receipts say so, and a record then missing is a finding of `receipts verify`.
    keeps_run_record: bool = False
    # Called with an approved proposal and its approval evidence just before the effect;
    # raising stops the effect (a durable intent, see counterfoil.sessions.intents).
    before_effect: Callable[[ToolProposal, ApprovalRecord], None] | None = None
    # The run's MCP servers (None: none; `mcp_call` is then off) and who is asked about
    # each call of a tool not marked read-only (None: every such call is a No).
    mcp_toolbox: McpToolbox | None = None
    confirm_mcp: ConfirmMcp | None = None
    # `before_effect` for an MCP call: its durable intent, written before the call is sent.
    before_mcp_call: Callable[[McpProposal, ApprovalRecord], None] | None = None
    # The person's approval rules (`rules.py`) and who is told as a rule approves an effect.
    approval_rules: RuleSet = NO_RULES
    on_rule_approved: RuleApproved | None = None
    stop_commands: threading.Event | None = None  # set: a running command is ended
    search_limits: SearchLimits = field(default_factory=SearchLimits)
    search_engine: str = "auto"  # or "ripgrep" / "python", to pin one engine
    tree_limits: TreeLimits = field(default_factory=TreeLimits)

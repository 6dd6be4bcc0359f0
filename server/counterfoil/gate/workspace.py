"""The model-facing gate: every tool call is checked, approved by a person, done, and recorded.

`Workspace` is a facade over its parts, each its own object: the record (outcomes, receipts,
what was seen), the path rules, the reads, the file effects, the command effects, and the one
approval path every effect takes. The parts are handed what they share; none reaches another's
private state. Each call returns its own record (`CallRecord`), or raises its refusal (with
the outcome already decided, `EffectStopped`), and the gate's step builds one `StepResult` from
that alone; the course's methods return its observation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from .. import tools
from ..actions import EFFECT_TOOLS, ToolAction, check_arguments
from ..commands.tree.command_tree import CommandTree
from ..commands.tree.snapshot import TreeLimits
from ..errors import AgentError, DetailedRefusal, ToolNotEnabled
from ..mcp.toolbox import McpToolbox
from ..proposals import McpProposal, ToolProposal
from ..receipt_fields import ApprovalRecord, ReceiptEvidence
from ..receipts import ReceiptNotRecorded, ReceiptStore
from ..search.scope import SearchLimits
from ..step_facts import Placeholder, TreeOverview
from ..steps import StepGate, StepResult
from ..verdict import EffectOutcome
from .approved_effects import ApprovedEffects
from .call_record import CallRecord
from .command_effects import CommandEffects
from .effect_stopped import EffectStopped, stopped_step
from .file_effects import FileEffects
from .forwarded import Forwarded
from .mcp_calls import McpCalls
from .overview import nearby_paths, tree_overview
from .policy import ToolPolicy
from .rules import RuleSet
from .workspace_paths import WorkspacePaths
from .workspace_reads import WorkspaceReads
from .workspace_record import WorkspaceRecord
from .workspace_setup import ConfirmMcp, ConfirmProposal, ConfirmTool, RuleApproved, WorkspaceSetup


class Workspace(StepGate):
    """Tools confined to `policy.root`; effects need approval and leave a receipt."""

    # What it was set up with (`WorkspaceSetup`, fixed when it is built) and, from the run's
    # record, its id, the proposing model and an effect left without a receipt.
    confirm_tool = Forwarded[ConfirmTool | None]("setup")
    confirm_proposal = Forwarded[ConfirmProposal | None]("setup")
    approval_via = Forwarded[str]("setup")
    keeps_run_record = Forwarded[bool]("setup")
    before_effect = Forwarded[Callable[[ToolProposal, ApprovalRecord], None] | None]("setup")
    search_limits = Forwarded[SearchLimits]("setup")
    search_engine = Forwarded[str]("setup")
    tree_limits = Forwarded[TreeLimits]("setup")
    stop_commands = Forwarded[threading.Event | None]("setup")
    mcp_toolbox = Forwarded[McpToolbox | None]("setup")
    confirm_mcp = Forwarded[ConfirmMcp | None]("setup")
    before_mcp_call = Forwarded[Callable[[McpProposal, ApprovalRecord], None] | None]("setup")
    approval_rules = Forwarded[RuleSet]("setup")
    on_rule_approved = Forwarded[RuleApproved | None]("setup")
    run_id = Forwarded[str]("record")
    model_identity = Forwarded[dict[str, Any] | None]("record")
    unrecorded_effect = Forwarded[str | None]("record")

    def __init__(
        self,
        policy: ToolPolicy,
        confirm_tool: ConfirmTool | None = None,
        receipt_store: ReceiptStore | None = None,
        *,
        setup: WorkspaceSetup | None = None,
    ) -> None:
        """`confirm_tool` and `receipt_store` stay positional for the course; the rest of
        what the workspace is set up with is `setup` (its `confirm_tool` is this one's)."""
        if setup is None:
            setup = WorkspaceSetup()
        if confirm_tool is not None:
            setup = replace(setup, confirm_tool=confirm_tool)
        self.setup = setup
        self.record = WorkspaceRecord(policy, receipt_store, setup)
        self.paths = WorkspacePaths(policy, self.record.receipt_store)
        self.reads = WorkspaceReads(self.paths, self.record, self._resolve)
        self.commands = CommandEffects(self.paths, self.record)
        self.files = FileEffects(self.paths, self.record, self._resolve, self._note_effect)
        self.effects = ApprovedEffects(self.record, self.files, self.commands)
        self.mcp_calls = McpCalls(self.record)

    def record_model(self, identity: dict[str, Any]) -> None:
        """Record the loaded model's identity, which each approval's evidence then names: the
        run's record, known only once the model is loaded, not part of the setup."""
        self.record.record_model(identity)

    def _resolve(self, raw: str, *, must_exist: bool = True) -> Path:
        """The parts resolve through `resolve_path` as it is on this workspace now."""
        return self.resolve_path(raw, must_exist=must_exist)

    def _note_effect(self, path: str) -> None:
        self.commands.command_tree().note_effect(path)

    # The record

    @property
    def policy(self) -> ToolPolicy:
        return self.record.policy

    @property
    def receipt_store(self) -> ReceiptStore:
        return self.record.receipt_store

    @property
    def available_tools(self) -> frozenset[str]:
        return self.record.available_tools

    @property
    def modified_files(self) -> tuple[str, ...]:
        return self.record.modified_files

    @property
    def read_digests(self) -> dict[str, str]:
        """The files the model has read (or written) and their digests, for a follow-up."""
        return self.record.read_digests

    @property
    def effect_outcomes(self) -> tuple[EffectOutcome, ...]:
        """What became of each effect call so far, in order (the run verdict reads this)."""
        return self.record.effect_outcomes

    def restore_outcomes(self, earlier: Sequence[EffectOutcome]) -> None:
        """A resumed run's earlier effects, so its verdict judges the whole run."""
        self.record.restore_outcomes(earlier)

    def note_outcome(self, outcome: EffectOutcome) -> None:
        """An outcome decided outside a proposal (a call refused before it could be one)."""
        self.record.note_outcome(outcome)

    # Paths and reads

    def resolve_path(self, raw: str, *, must_exist: bool = True) -> Path:
        """Map a model-given path into the root, refusing anything that could leave it."""
        return self.paths.resolve_path(raw, must_exist=must_exist)

    def list_files(self, raw: str = ".") -> str:
        return self.reads.list_files(raw).observation

    def read_file(
        self, raw: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        return self.reads.read_file(raw, start_line, end_line).observation

    def search_files(self, pattern: str, raw: str = ".", literal: bool = False) -> str:
        return self.reads.search_files(pattern, raw, literal).observation

    def overview(self) -> TreeOverview:
        """The root's files as the model may see them, folded to fit the prompt."""
        return tree_overview(self.paths)

    # Effects: each is a proposal, an approval, then the effect itself

    def write_file(self, raw: str, content: str) -> str:
        return self._performed(ToolAction("write_file", {"path": raw, "content": content}))

    def edit_file(self, raw: str, old: str, new: str) -> str:
        return self._performed(ToolAction("edit_file", {"path": raw, "old": old, "new": new}))

    def run_command(self, argv: list[str]) -> str:
        return self._performed(ToolAction("run_command", {"argv": argv}))

    def _performed(self, action: ToolAction) -> str:
        """The course's effect methods: the observation, or the error that stopped the effect."""
        proposal = self.propose(action, self.record.allocate_id())
        return _observation(lambda: self.effects.perform(proposal))

    def propose(self, action: ToolAction, tool_call_id: str) -> ToolProposal:
        """Check an effect completely and describe exactly what it would do."""
        return self.effects.propose(action, tool_call_id)

    def revert(self, call_id: str, tool_call_id: str | None = None) -> str:
        """Put back the bytes a file effect's receipt says were there before it (or remove the
        file it created), or every file a command changed that still holds what the command
        left: an effect like any other, proposed, approved, digest-checked and recorded with
        `reverts`. Raises AgentError when it cannot be done or is denied."""
        return _observation(lambda: self._reverted(call_id, tool_call_id))

    def _reverted(self, call_id: str, tool_call_id: str | None = None) -> CallRecord:
        proposal = self.effects.propose_revert(call_id, tool_call_id or self.record.allocate_id())
        return self.effects.perform(proposal)

    def command_tree(self) -> CommandTree:
        """The snapshots that say what each command changed (made on the first command)."""
        return self.commands.command_tree()

    # The gate

    def execute_step(self, action: Any, tool_call_id: str | None = None) -> StepResult:
        """Run one model action and return the record of what it did beside its observation;
        every refusal is a record whose observation is `error: …`."""
        return self._step(lambda: self._execute(action, tool_call_id))

    def revert_step(self, call_id: str) -> StepResult:
        """`revert`, as a step: a refusal or a No is its observation, not an exception."""
        return self._step(lambda: self._reverted(call_id))

    def _step(self, perform: Callable[[], CallRecord]) -> StepResult:
        """The step's record, from what the call returned or the error that stopped it."""
        try:
            done = perform()
        except EffectStopped as stopped:
            return self._stopped(stopped.error, stopped.outcome)
        except Exception as error:  # noqa: BLE001 - the gate never raises for model input
            return self._stopped(error, None)
        receipt, effect = done.receipt, done.effect
        evidence = receipt.evidence if receipt is not None else ReceiptEvidence()
        call_id = receipt.tool_call_id if receipt is not None else None
        return StepResult(
            done.observation,
            call_id=effect.call_id if effect is not None else call_id,
            state=None if effect is None else effect.state,
            effect=effect,
            receipt_id=None if receipt is None else receipt.receipt_id,
            output_sha256=evidence.output_sha256,
            result_sha256=evidence.result_sha256,
            syntax=done.syntax,
            same=done.same,
            lines=done.lines,
            search=done.search,
        )

    def _stopped(self, error: Exception, effect: EffectOutcome | None) -> StepResult:
        if isinstance(error, ReceiptNotRecorded):  # the run must stop and say so
            self.record.unrecorded_effect = str(error)
        return stopped_step(error, effect, partial(nearby_paths, self.paths))

    def _execute(self, action: Any, tool_call_id: str | None) -> CallRecord:
        if not isinstance(action, ToolAction):
            raise AgentError("action must be a tool call")
        if action.tool not in self.available_tools:
            raise ToolNotEnabled(action.tool)
        if not isinstance(action.arguments, dict):
            raise AgentError("arguments must be an object")
        check_arguments(action.tool, action.arguments)
        placeholder = tools.placeholder_argument(action.arguments)
        if placeholder is not None:
            detail = Placeholder(*placeholder)
            raise DetailedRefusal(detail.sentence(), detail)
        tool = tools.tool_named(action.tool)
        assert tool is not None
        if tool.handler is not None:
            handler: Callable[..., CallRecord] = getattr(self.reads, tool.handler)
            return handler(
                *(action.arguments.get(item.name, item.default) for item in tool.arguments)
            )
        assert action.tool in EFFECT_TOOLS
        if tool_call_id is None:
            tool_call_id = self.record.allocate_id()
        elif not isinstance(tool_call_id, str) or not tool_call_id:
            raise AgentError("tool call id must be a non-empty string")
        if tool.requires == "mcp":
            return self.mcp_calls.perform(action, tool_call_id)
        existing = self.receipt_store.get(tool_call_id)
        if existing is not None:
            if existing.tool == action.tool and existing.arguments == action.arguments:
                return CallRecord(existing.result, receipt=existing)
            raise AgentError("tool call id was already used for another action")
        try:
            proposal = self.effects.propose(action, tool_call_id)
        except AgentError as error:
            refused = EffectOutcome(
                tool_call_id,
                action.tool,
                "refused",
                reason=str(error),
                path=_text_or_none(action.arguments.get("path")),
                argv=_argv_or_none(action.arguments.get("argv")),
            )
            raise EffectStopped(self.record.note_outcome(refused), error) from error
        return self.effects.perform(proposal)


def _observation(perform: Callable[[], CallRecord]) -> str:
    """What the course's methods return: the call's observation; an effect stopped after its
    outcome was noted raises the error that stopped it, as a direct call always has."""
    try:
        return perform().observation
    except EffectStopped as stopped:
        raise stopped.error from None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _argv_or_none(value: object) -> tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else None

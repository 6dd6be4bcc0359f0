"""The workspace's command effects: proposing an allowlisted command, running it under its
snapshots (what it changed), reviewing and reverting what it changed, each noted and receipted
in the workspace's record and returning its own (`CallRecord`)."""

from __future__ import annotations

from collections.abc import Callable

from .. import tools
from ..actions import ToolAction
from ..commands.runner import CommandResult
from ..commands.tree.command_tree import CommandTree
from ..commands.tree.restore import (
    applied_record,
    apply_approved_change_set,
    propose_command_revert,
)
from ..commands.tree.sandbox import OFF, sandbox_for
from ..commands.tree.snapshot import TreeRules, guarded_paths
from ..errors import AgentError
from ..proposals import ChangeSetProposal, CommandProposal, CommandRunsAs, ToolProposal
from ..receipt_fields import ReceiptEvidence
from ..verdict import EffectOutcome
from .approval import Approval
from .call_record import CallRecord
from .command_run import run_tracked_command
from .policy import ToolPolicy
from .workspace_paths import WorkspacePaths
from .workspace_record import WorkspaceRecord

Ask = Callable[[ToolProposal], Approval]


class CommandEffects:
    """Commands run on the workspace's root, and the snapshots that say what each changed."""

    def __init__(self, paths: WorkspacePaths, record: WorkspaceRecord) -> None:
        self.paths = paths
        self.record = record
        self._tree: CommandTree | None = None

    @property
    def policy(self) -> ToolPolicy:
        return self.paths.policy

    def propose(self, action: ToolAction, tool_call_id: str) -> CommandProposal:
        argv = action.arguments.get("argv")
        if not isinstance(argv, list) or not tools.is_argv(argv):
            raise AgentError(tools.ARGV_RULE)
        if tuple(argv) not in self.policy.allowed_commands:
            raise AgentError("command is not allowed")
        # Refused before asking when it cannot be had; the question says how it will run.
        mode = self.policy.command_sandbox
        sandbox = sandbox_for(mode, self.policy.root, network=False) if mode != OFF else None
        runs_as = (
            CommandRunsAs(OFF, "none", True)
            if sandbox is None
            else CommandRunsAs(mode, sandbox.mechanism, self.policy.allow_network)
        )
        return CommandProposal(
            tool_call_id=tool_call_id,
            action=action,
            argv=tuple(argv),
            cwd=str(self.policy.root),
            timeout_seconds=float(self.policy.command_timeout_seconds),
            runs_as=runs_as,
        )

    def propose_revert(
        self, call_id: str, tool_call_id: str, evidence: ReceiptEvidence
    ) -> ChangeSetProposal:
        root, protected = self.policy.root, self.policy.protected_patterns
        plan = (call_id, tool_call_id, applied_record(evidence), self.record.stored_object)
        return propose_command_revert(*plan, root, protected, self.paths.is_receipt_log)

    def apply_change_set(self, proposal: ChangeSetProposal) -> CallRecord:
        """Put each file in its approved state if it still holds what was shown (see
        `commands/tree/restore.py`), then note and receipt what was done."""
        done = apply_approved_change_set(proposal, self.policy.root, self.policy.protected_patterns)
        outcome = self.record.note(proposal, "approved", tree_changes=done.changed)
        for path, _ in done.changed:
            self.record.modified.add(path)
            self.record.seen.pop(path, None)
            self.command_tree().note_effect(path)
        evidence = self.record.run_evidence(proposal, done.evidence)
        artifacts = tuple(path for path, _ in done.changed)
        receipt = self.record.receipt(proposal, "ok", done.result, evidence, artifacts)
        return CallRecord(done.result, outcome, receipt)

    def command_tree(self) -> CommandTree:
        """The snapshots that say what each command changed (made on the first command)."""
        if self._tree is None:
            store = self.record.receipt_store
            rules = TreeRules(
                self.policy.protected_patterns,
                self.paths.is_receipt_log,
                guarded_paths(
                    self.policy.root,
                    (*store.own_paths(with_folder=True), *self.paths.counterfoil_folders),
                ),
            )
            self._tree = CommandTree(self.policy.root, rules, store, self.record.setup.tree_limits)
        return self._tree

    def run(self, proposal: CommandProposal, ask: Ask) -> CallRecord:
        """Run an approved command; `ask` reviews what it changed, when the policy says so."""

        def ran(
            outcome: CommandResult, changed: tuple[tuple[str, str | None], ...], review: str | None
        ) -> EffectOutcome:
            return self.record.note(
                proposal,
                "approved",
                exit_status=outcome.status,
                timed_out=outcome.timed_out,
                tree_changes=changed,
                review=review,
            )

        run = run_tracked_command(
            proposal,
            self.policy,
            self.record.receipt_store,
            self.command_tree(),
            stop=self.record.setup.stop_commands,
            ask=ask,
            load_object=self.record.stored_object,
            ran=ran,
        )
        exit_state = "ok" if run.outcome.status == 0 else "error"
        evidence = self.record.run_evidence(proposal, run.evidence)
        receipt = self.record.receipt(proposal, exit_state, run.observation, evidence)
        return CallRecord(run.observation, run.effect, receipt)

"""Every effect's one path: a complete proposal, the person's approval (decided by their
approval rules when one matches; asked again on the disk's bytes, or for the text they edited,
when they say so), the durable intent, then the file or command effect itself, which returns
its `CallRecord`; a No, a refusal or a failure is noted in the record and raised with its
outcome (`EffectStopped`)."""

from __future__ import annotations

from dataclasses import replace

from ..actions import ToolAction
from ..errors import AgentError, ApprovalWithdrawn
from ..proposals import ChangeSetProposal, CommandProposal, EditProposal, ToolProposal
from .approval import WITHDRAWN, Approval, denial
from .call_record import CallRecord
from .command_effects import CommandEffects
from .edited_approval import edited_proposal
from .effect_stopped import EffectStopped
from .file_effects import FileEffects
from .repropose import REPROPOSED_NOTE, can_repropose, reproposed
from .revert import reverts_as_command
from .rules import denied_by_rule
from .workspace_record import WorkspaceRecord


class ApprovedEffects:
    """Proposes effects, asks the person, and hands each approved one to its kind."""

    def __init__(
        self, record: WorkspaceRecord, files: FileEffects, commands: CommandEffects
    ) -> None:
        self.record = record
        self.files = files
        self.commands = commands

    def propose(self, action: ToolAction, tool_call_id: str) -> ToolProposal:
        """Check an effect completely and describe exactly what it would do."""
        if action.tool == "run_command":
            return self.commands.propose(action, tool_call_id)
        return self.files.propose(action, tool_call_id)

    def propose_revert(self, call_id: str, tool_call_id: str) -> ToolProposal:
        receipt = self.record.receipt_store.get(call_id)
        if receipt is not None and reverts_as_command(receipt):
            return self.commands.propose_revert(call_id, tool_call_id, receipt.evidence)
        return self.files.propose_revert(receipt, call_id, tool_call_id)

    def approval(self, proposal: ToolProposal) -> Approval:
        record = self.record
        if record.setup.confirm_proposal is not None:
            return Approval.of(record.setup.confirm_proposal(proposal))
        if record.setup.confirm_tool is not None:
            return Approval.of(record.setup.confirm_tool(proposal.action))
        return Approval(False)

    def perform(self, proposal: ToolProposal) -> CallRecord:
        """Ask (unless the person's rules decide), then do the approved effect; EffectStopped
        for a No, a rule's refusal or a failure (ApprovalWithdrawn for a question taken back:
        nothing was decided)."""
        effect = self.record.rule_effect(proposal)
        ruled = self.record.decide_by_rules(effect, proposal.tool_call_id)
        if ruled.decision == "deny":
            reason = denied_by_rule(ruled)
            raise EffectStopped(self.record.note(proposal, "refused", reason), AgentError(reason))
        if ruled.decision == "allow":
            approval, note = Approval(True), ""
            if self.record.setup.on_rule_approved is not None:
                self.record.setup.on_rule_approved(proposal, ruled)
        else:
            approval, note = self.approval(proposal), ""
        while approval.repropose and can_repropose(proposal):
            proposal, note = self._reproposed(proposal), REPROPOSED_NOTE
            approval = self.approval(proposal)
        if approval.withdrawn:  # not answered: the call stays open, nothing is decided
            raise ApprovalWithdrawn(WITHDRAWN, proposal.tool_call_id)
        if not approval.approved:
            self.record.note_rejected(effect)
            outcome = self.record.note(proposal, "rejected", approval.reason)
            raise EffectStopped(outcome, AgentError(denial(approval.reason)))
        shown: EditProposal | None = None
        if approval.text is not None:
            edited = self._edited(proposal, approval.text)
            if edited is not None:
                assert isinstance(proposal, EditProposal)  # _edited refuses anything else
                shown, proposal = proposal, edited
        record = self.record
        try:
            if record.setup.before_effect is not None:
                record.setup.before_effect(proposal, record.approval_evidence(proposal, shown))
            record.receipt_store.check_writable()
            if isinstance(proposal, CommandProposal):
                return self.commands.run(proposal, self.approval)
            if isinstance(proposal, ChangeSetProposal):
                return self.commands.apply_change_set(proposal)
            self.files.keep_bytes(proposal)
            if shown is not None:
                record.receipt_store.keep_object(shown.proposed_text.encode("utf-8"))
            if proposal.reverts is not None:
                return self.files.apply_revert(proposal)
            written = self.files.write(proposal, shown)
        except Exception as error:
            raise EffectStopped(record.note_failure(proposal, error), error) from error
        return replace(written, observation=written.observation + note)

    def _reproposed(self, proposal: ToolProposal) -> EditProposal:
        """The edit again on the file's bytes now, or a No that says why it cannot be."""
        assert isinstance(proposal, EditProposal)  # can_repropose allows edits only
        limit = self.files.policy.max_ranged_file_bytes
        try:
            return reproposed(proposal, self.files.paths.read_bytes(proposal.path, limit))
        except AgentError as error:
            outcome = self.record.note(proposal, "rejected", str(error))
            raise EffectStopped(outcome, AgentError(denial(str(error)))) from None

    def _edited(self, proposal: ToolProposal, text: object) -> EditProposal | None:
        """The text the person approved in place of the proposal, checked like any write
        (None: it is the proposal itself); a text that fails the checks is refused."""
        try:
            if not isinstance(proposal, EditProposal) or proposal.reverts is not None:
                raise AgentError("an edited approval applies only to file edits")
            limit = self.files.policy.max_write_bytes
            edited = edited_proposal(proposal, text, limit)
        except AgentError as error:
            raise EffectStopped(self.record.note(proposal, "refused", str(error)), error) from error
        return None if edited.proposed_sha256 == proposal.proposed_sha256 else edited

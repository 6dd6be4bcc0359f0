"""What a workspace has recorded (beside what it is set up with, `WorkspaceSetup`): each
effect's outcome, its receipt (assembled here and nowhere else: the evidence, the run id, who approved what they were
shown), the call ids it handed out, and the files the model has seen and changed. The reads and
the effects are handed this one record of the run; none of them keeps its own, and what one
call did comes back from the call itself (`CallRecord`), not through this record."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .. import tools
from ..errors import AgentError
from ..proposals import ChangeSetProposal, CommandProposal, EditProposal, McpProposal, ToolProposal
from ..receipt_evidence import approval_record, utc_now
from ..receipt_fields import ApprovalRecord, ModelRecord, ReceiptEvidence
from ..receipts import EffectReceipt, ReceiptNotRecorded, ReceiptStore
from ..receipts.content import load_object
from ..receipts.own_folder import own_folder
from ..verdict import EffectOutcome, EffectState
from .policy import ToolPolicy
from .rules import RuleDecision, RuleEffect
from .workspace_setup import WorkspaceSetup

RULES_VIA = "approvalRules"  # an approval's `via` when a rule approved without asking


class WorkspaceRecord:
    """The setup of a workspace and the record of its effects so far."""

    def __init__(
        self, policy: ToolPolicy, store: ReceiptStore | None, setup: WorkspaceSetup
    ) -> None:
        """What it records into and how it is set up; the record starts with the files the
        model has already read."""
        self.policy = policy
        self.setup = setup
        self.receipt_store = store if store is not None else ReceiptStore()
        # The files the model has read (or written), by digest: an existing file is changed
        # only over bytes it has seen (a follow-up starts with its earlier reads).
        self.seen: dict[str, str] = dict(setup.read_digests or {})
        self.modified: set[str] = set()
        self._outcomes: list[EffectOutcome] = []
        self._call_ids = threading.Lock()
        self.run_id = setup.run_id or uuid.uuid4().hex
        # The proposing model's identity (`ModelIdentity.as_record()`), recorded once it is
        # loaded (`record_model`); each approval's evidence names it.
        self.model_identity: dict[str, Any] | None = None
        # Why an effect that ran has no receipt (the log could not be written): the run stops.
        self.unrecorded_effect: str | None = None
        # The calls a rule approved (their receipts name it) and the effects the person said
        # No to (no rule allows them again this run).
        self.by_rule: dict[str, RuleDecision] = {}
        self.rejected_effects: set[tuple[str, ...]] = set()

    def record_model(self, identity: dict[str, Any]) -> None:
        """The run's record of the model that proposes its effects, known once it is loaded."""
        self.model_identity = identity

    @property
    def available_tools(self) -> frozenset[str]:
        return tools.enabled_tools(
            self.policy.allow_writes,
            self.policy.allowed_commands,
            self.policy.allow_search,
            allow_mcp=self.setup.mcp_toolbox is not None,
            edit_form=self.policy.edit_form,
        )

    @property
    def modified_files(self) -> tuple[str, ...]:
        return tuple(sorted(self.modified))

    @property
    def read_digests(self) -> dict[str, str]:
        """The files the model has read (or written) and their digests, for a follow-up."""
        return dict(self.seen)

    @property
    def effect_outcomes(self) -> tuple[EffectOutcome, ...]:
        """What became of each effect call so far, in order (the run verdict reads this)."""
        return tuple(self._outcomes)

    def restore_outcomes(self, earlier: Sequence[EffectOutcome]) -> None:
        """A resumed run's earlier effects, so its verdict judges the whole run."""
        self._outcomes[:0] = earlier
        for outcome in earlier:
            if outcome.state == "rejected" and outcome.argv is not None:
                self.rejected_effects.add(RuleEffect(outcome.tool, argv=outcome.argv).key)
            elif outcome.state == "rejected" and outcome.path is not None:
                self.rejected_effects.add(RuleEffect(outcome.tool, path=outcome.path).key)

    def note_outcome(self, outcome: EffectOutcome) -> EffectOutcome:
        """An effect call became `outcome` (one decided outside a proposal too: a call refused
        before it could be one); it is returned for the call's own record."""
        self._outcomes.append(outcome)
        return outcome

    def note(
        self, proposal: ToolProposal, state: EffectState, reason: str | None = None, **facts: Any
    ) -> EffectOutcome:
        if isinstance(proposal, CommandProposal):
            subject: dict[str, Any] = {"argv": proposal.argv}
        elif isinstance(proposal, ChangeSetProposal):
            subject = {}
        else:
            subject = {"path": proposal.path}
        ruled = self.by_rule.get(proposal.tool_call_id) if state == "approved" else None
        if ruled is not None and ruled.rule is not None:
            facts = {**facts, "by_rule": ruled.rule.text}
        return self.note_outcome(
            EffectOutcome(
                proposal.tool_call_id,
                proposal.action.tool,
                state,
                reason=reason,
                **subject,
                **facts,
            )
        )

    def rule_effect(self, proposal: ToolProposal) -> RuleEffect:
        """The proposal as the approval rules see it."""
        action = proposal.action
        if isinstance(proposal, CommandProposal):
            runs_as = proposal.runs_as
            confined = runs_as is not None and runs_as.mode != "off"
            effect = RuleEffect(action.tool, argv=tuple(proposal.argv), confined=confined)
        elif isinstance(proposal, EditProposal) and proposal.reverts is None:
            effect = RuleEffect(action.tool, path=proposal.path)
        else:
            effect = RuleEffect(action.tool)
        return self.seen_before(effect)

    def seen_before(self, effect: RuleEffect) -> RuleEffect:
        """`effect`, marked when the person said No to the same one earlier in the run."""
        if effect.key in self.rejected_effects:
            return replace(effect, rejected_before=True)
        return effect

    def decide_by_rules(self, effect: RuleEffect, call_id: str) -> RuleDecision:
        """What the rules decide for one call; an `allow` is kept for its receipt."""
        decided = self.setup.approval_rules.decide(effect, self.policy.protected_patterns)
        if decided.decision == "allow":
            self.by_rule[call_id] = decided
        return decided

    def note_rejected(self, effect: RuleEffect) -> None:
        self.rejected_effects.add(effect.key)

    def note_failure(self, proposal: ToolProposal, error: BaseException) -> EffectOutcome:
        """An approved effect that did not complete; one already done keeps what it did."""
        reason = str(error) if isinstance(error, AgentError) else f"{error}"
        last = self._outcomes[-1] if self._outcomes else None
        if last is not None and last.call_id == proposal.tool_call_id and last.state == "approved":
            self._outcomes[-1] = replace(last, state="failed", reason=reason)
            return self._outcomes[-1]
        return self.note(proposal, "failed", reason)

    def receipt(
        self,
        proposal: ToolProposal | McpProposal,
        exit_state: str,
        result: str,
        evidence: ReceiptEvidence,
        artifacts: tuple[str, ...] | None = None,
    ) -> EffectReceipt:
        """Append the receipt of an effect that has already run and return it as stored; any
        failure is loud.

        A file effect changed its path (a change set: `artifacts`). A command's are none, as in
        the tiny-llm course: what it changed is in its `tree_changes`, not its artifacts."""
        if artifacts is None:
            artifacts = (proposal.path,) if isinstance(proposal, EditProposal) else ()
        receipt = EffectReceipt(
            tool_call_id=proposal.tool_call_id,
            tool=proposal.action.tool,
            arguments=dict(proposal.action.arguments),
            exit_state=exit_state,
            result=result,
            changed_artifacts=artifacts,
            evidence=replace(evidence, time=utc_now()),
        )
        try:
            return self.receipt_store.put(receipt)
        except (AgentError, OSError) as error:
            why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise ReceiptNotRecorded(why) from None

    def approval_evidence(
        self, proposal: ToolProposal, shown: EditProposal | None = None
    ) -> ApprovalRecord:
        """Who approved what they were shown (`shown`: the model's proposal, when the person
        approved other text)."""
        approval = self.approval_record(shown or proposal)
        if shown is not None and isinstance(proposal, EditProposal):
            approval = replace(approval, modified=True, approved_sha256=proposal.proposed_sha256)
        return approval

    def approval_record(self, proposal: ToolProposal) -> ApprovalRecord:
        argv = proposal.argv if isinstance(proposal, CommandProposal) else None
        return self.rule_record(
            proposal.tool_call_id,
            replace(
                approval_record(proposal, self.via(proposal)),
                grant=self.policy.granted_by.of(argv),
                model=self.model_record(),
            ),
        )

    def via(self, proposal: ToolProposal) -> str:
        """The approval channel `proposal`'s receipt names."""
        via_of = self.setup.via_of
        return self.setup.approval_via if via_of is None else via_of(proposal)

    def rule_record(self, call_id: str, approval: ApprovalRecord) -> ApprovalRecord:
        """`approval`, naming the rule that approved the call when one did: nobody was asked."""
        ruled = self.by_rule.get(call_id)
        if ruled is None or ruled.rule is None:
            return approval
        return replace(
            approval,
            via=RULES_VIA,
            asked=False,
            rule=ruled.rule.text,
            rule_index=ruled.index,
            rules_sha256=ruled.rules_sha256,
        )

    def model_record(self) -> ModelRecord | None:
        """The proposing model, as each approval's evidence names it (None: not known)."""
        identity = self.model_identity
        return None if identity is None else ModelRecord.from_record(identity)

    def run_evidence(
        self,
        proposal: ToolProposal | McpProposal,
        evidence: ReceiptEvidence,
        approval: ApprovalRecord | None = None,
    ) -> ReceiptEvidence:
        """An effect's evidence with this run's id and who approved it, as its receipt records
        them (recording may fail; then the run must stop and say so)."""
        if approval is None:
            assert not isinstance(proposal, McpProposal)  # its approval is its own
            approval = self.approval_record(proposal)
        recorded = True if self.setup.keeps_run_record else None
        return replace(evidence, run_id=self.run_id, run_record=recorded, approval=approval)

    def stored_object(self, digest: str) -> bytes | None:
        """Bytes a receipt names, from the log's content store (None: not kept there)."""
        log = self.receipt_store.path
        return None if log is None else load_object(own_folder(log), digest)

    def allocate_id(self) -> str:
        """A call id no run and no process on this log has used, even for refused calls."""
        with self._call_ids:
            return self.receipt_store.reserve_call_id()

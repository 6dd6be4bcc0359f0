"""The workspace's MCP calls: each an effect like any other. The call is checked whole (an
offered tool, its definition still the approved one), shown with its exact arguments and asked
about (a tool the person marked read-only is not asked, and its record says so), made, and
receipted in the same chain: the server's identity, the definition's digest, the arguments, the
result's digest (the result itself in the content store), a bounded preview, who approved and
the model. A server that fails is one sentence; a call that got no answer has no receipt."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, cast

from ..actions import ToolAction
from ..errors import AgentError, ApprovalWithdrawn
from ..mcp.connection import CallReply, McpFailure
from ..proposals import McpProposal, sha256_hex
from ..receipt_evidence import os_user
from ..receipt_fields import ApprovalRecord, JsonValue, McpRecord, ReceiptEvidence
from ..receipts import ReceiptNotRecorded, canonical_json
from ..steps import error_text
from ..verdict import EffectOutcome, EffectState
from .approval import WITHDRAWN, Approval, denial
from .call_record import CallRecord
from .effect_stopped import EffectStopped
from .rules import RuleEffect, denied_by_rule
from .workspace_record import WorkspaceRecord

PREVIEW_CHARS = 2000  # of the result's text, in the receipt's `result`
MAX_RESULT_BYTES = 8 * 1024 * 1024  # a larger result is not kept or shown
READ_ONLY_NOTE = "not asked: you marked this tool read-only"


class McpCalls:
    """Proposes, asks about, makes and records the calls of the run's MCP tools."""

    def __init__(self, record: WorkspaceRecord) -> None:
        self.record = record

    def propose(self, action: ToolAction, tool_call_id: str) -> McpProposal:
        """The call as the person will see it; AgentError when it cannot be made."""
        toolbox = self.record.setup.mcp_toolbox
        if toolbox is None:
            raise AgentError("no MCP servers are configured")
        server, name = action.arguments["server"], action.arguments["name"]
        arguments = action.arguments.get("arguments", {})
        offered = toolbox.find(server, name)
        if offered is None:
            why = toolbox.failure(server)
            raise AgentError(
                f"MCP tool {server}/{name} is not offered to this run" + (f": {why}" if why else "")
            )
        try:
            toolbox.current(offered)
        except McpFailure as error:
            raise AgentError(str(error)) from None
        return McpProposal(
            tool_call_id=tool_call_id,
            action=action,
            server=offered.server.identity(),
            tool=name,
            description=offered.definition.description,
            definition_sha256=offered.definition.sha256,
            arguments=dict(arguments),
            read_only=offered.read_only,
        )

    def perform(self, action: ToolAction, tool_call_id: str) -> CallRecord:
        """Check, ask, call and record; EffectStopped for a refusal, a No or a failed call."""
        try:
            proposal = self.propose(action, tool_call_id)
        except AgentError as error:
            named = f"{action.arguments.get('server')}/{action.arguments.get('name')}"
            outcome = self._note(tool_call_id, "refused", str(error), named)
            raise EffectStopped(outcome, error) from error
        named = f"{proposal.server['name']}/{proposal.tool}"
        effect = self._rule_effect(proposal)
        ruled = self.record.decide_by_rules(effect, tool_call_id)
        if ruled.decision == "deny":
            reason = denied_by_rule(ruled)
            outcome = self._note(tool_call_id, "refused", reason, named)
            raise EffectStopped(outcome, AgentError(reason))
        if ruled.decision == "allow":
            approval = Approval(True)
            if self.record.setup.on_rule_approved is not None:
                self.record.setup.on_rule_approved(proposal, ruled)
        else:  # a rule that says ask (or could not allow) asks even about a read-only tool
            approval = self._approval(proposal, asks=ruled.rule is not None)
        read_only_pass = ruled.rule is None and proposal.read_only  # nobody asked, no rule
        if approval.withdrawn:
            raise ApprovalWithdrawn(WITHDRAWN, proposal.tool_call_id)
        if not approval.approved:
            self.record.note_rejected(effect)
            outcome = self._note(tool_call_id, "rejected", approval.reason, named)
            raise EffectStopped(outcome, AgentError(denial(approval.reason)))
        record = self.record
        toolbox = record.setup.mcp_toolbox
        assert toolbox is not None
        offered = toolbox.find(str(proposal.server["name"]), proposal.tool)
        assert offered is not None
        approval_record = self._approval_record(proposal, read_only_pass)
        try:
            if record.setup.before_mcp_call is not None:
                record.setup.before_mcp_call(proposal, approval_record)
            record.receipt_store.check_writable()
            started = time.monotonic()
            reply = toolbox.call(offered, proposal.arguments)
        except (McpFailure, AgentError, OSError) as error:
            outcome = self._note(tool_call_id, "failed", str(error), named)
            raise EffectStopped(outcome, AgentError(str(error))) from None
        duration = time.monotonic() - started
        return self._recorded(proposal, reply, duration, approval_record)

    def _rule_effect(self, proposal: McpProposal) -> RuleEffect:
        """The call as the approval rules see it, its definition's pin looked up only when a
        rule might allow it."""
        server = str(proposal.server["name"])
        effect = self.record.seen_before(
            RuleEffect("mcp_call", server=server, mcp_tool=proposal.tool)
        )
        toolbox = self.record.setup.mcp_toolbox
        offered = None if toolbox is None else toolbox.find(server, proposal.tool)
        if toolbox is None or offered is None or not self.record.setup.approval_rules.rules:
            return effect
        pinned = toolbox.pins.check(offered.server, offered.definition).state == "pinned"
        return replace(effect, pinned=pinned)

    def _approval(self, proposal: McpProposal, *, asks: bool = False) -> Approval:
        if proposal.read_only and not asks:
            return Approval(True)
        confirm = self.record.setup.confirm_mcp
        return Approval(False) if confirm is None else Approval.of(confirm(proposal))

    def _approval_record(self, proposal: McpProposal, not_asked: bool) -> ApprovalRecord:
        """Who approved the call: the person, a rule, or nobody (a tool marked read-only)."""
        return self.record.rule_record(
            proposal.tool_call_id,
            ApprovalRecord(
                decision="approved",
                by=os_user(),
                via="readOnlyTools" if not_asked else self.record.setup.approval_via,
                shown_sha256=sha256_hex(canonical_json(proposal.shown).encode("utf-8")),
                modified=False,
                asked=False if not_asked else None,
                model=self.record.model_record(),
            ),
        )

    def _recorded(
        self,
        proposal: McpProposal,
        reply: CallReply,
        duration: float,
        approval: ApprovalRecord,
    ) -> CallRecord:
        """Keep the result, note the outcome and append the receipt; the model's text."""
        record = self.record
        data = canonical_json(reply.result).encode("utf-8")
        facts = McpRecord(
            server=cast(dict[str, JsonValue], proposal.server),
            tool=proposal.tool,
            definition_sha256=proposal.definition_sha256,
            read_only=proposal.read_only,
            duration_seconds=round(duration, 3),
            result_sha256=sha256_hex(data),
            result_bytes=len(data),
            is_error=reply.is_error,
        )
        if len(data) > MAX_RESULT_BYTES:
            sentence = (
                f"MCP server {proposal.server['name']} answered {len(data)} bytes, over the "
                f"{MAX_RESULT_BYTES} byte limit; the result was not kept or shown"
            )
            facts = replace(facts, result_kept=False)
            text, exit_state = error_text(sentence), "error"
        else:
            record.receipt_store.keep_object(data)
            facts = replace(facts, result_kept=True)
            text = result_text(reply.result)
            exit_state = "error" if reply.is_error else "ok"
        preview = text[:PREVIEW_CHARS]
        facts = replace(facts, preview_truncated=len(text) > len(preview))
        named = f"{proposal.server['name']}/{proposal.tool}"
        outcome = self._note(proposal.tool_call_id, "approved", None, named)
        evidence = record.run_evidence(proposal, ReceiptEvidence(mcp=facts), approval)
        try:
            receipt = record.receipt(proposal, exit_state, preview, evidence, ())
        except ReceiptNotRecorded as error:  # the call was made: it stays approved
            raise EffectStopped(outcome, error) from error
        note = f" ({READ_ONLY_NOTE})" if approval.via == "readOnlyTools" else ""
        return CallRecord(
            f"MCP {proposal.server['name']}/{proposal.tool}{note}:\n{text}", outcome, receipt
        )

    def _note(
        self, call_id: str, state: EffectState, reason: str | None, mcp_tool: str
    ) -> EffectOutcome:
        """The call's outcome, named by `server/tool` in the progress note and the verdict."""
        ruled = self.record.by_rule.get(call_id) if state == "approved" else None
        rule = None if ruled is None or ruled.rule is None else ruled.rule.text
        return self.record.note_outcome(
            EffectOutcome(
                call_id, "mcp_call", state, reason=reason, by_rule=rule, mcp_tool=mcp_tool
            )
        )


def result_text(result: dict[str, Any]) -> str:
    """What the model reads of a result: each text block as it is, any other block named with
    its type and size, the structured content as JSON when there is no text."""
    parts: list[str] = []
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        else:
            size = len(canonical_json(block))
            parts.append(f"[{block.get('type', 'block')} content, {size} bytes, not shown]")
    if not parts and "structuredContent" in result:
        parts.append(canonical_json(result["structuredContent"]))
    text = "\n".join(parts)
    return error_text(text) if result.get("isError") else text

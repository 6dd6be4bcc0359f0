"""What the run panel needs beyond the loop's events: which call a step made, what the person
answered, what its receipt holds; and the runs and conversation this daemon keeps.

The loop reports a step after its effect; the approval and the receipt arrive before that, on
the same worker thread, so they are held here and attached to the step's event.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..approval import Approval
from ..loop import AgentEvent, Messages
from ..proposals import ToolProposal
from ..receipts import EffectReceipt
from .outcomes import step_outcome
from .protocol import event_dict


class StepEvidence:
    """Collects one step's approval and receipt, and turns the step into its event dict."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._call_id: str | None = None
        self._approval: Approval | None = None
        self._receipt: EffectReceipt | None = None
        self._lock = threading.Lock()

    def answered(self, proposal: ToolProposal, approval: Approval) -> None:
        with self._lock:
            self._call_id, self._approval = proposal.tool_call_id, approval

    def recorded(self, receipt: EffectReceipt) -> None:
        with self._lock:
            self._call_id, self._receipt = receipt.tool_call_id, receipt

    def event(self, event: AgentEvent) -> dict[str, Any]:
        with self._lock:
            call_id, approval, receipt = self._call_id, self._approval, self._receipt
            self._call_id = self._approval = self._receipt = None
        return event_fields(event, self.run_id, call_id, approval, receipt)


def event_fields(
    event: AgentEvent,
    run_id: str | None,
    call_id: str | None,
    approval: Approval | None,
    receipt: EffectReceipt | None,
) -> dict[str, Any]:
    shown = event_dict(event)
    evidence = receipt.evidence if receipt is not None else {}
    approved = None if approval is None else approval.approved
    shown.update(
        runId=run_id,
        toolCallId=call_id,
        receiptId=None if receipt is None else receipt.receipt_id,
        outputSha256=evidence.get("output_sha256"),
        resultSha256=evidence.get("result_sha256"),
        reason=None if approval is None or approval.approved else approval.reason,
        outcome=step_outcome(event.action, event.result, approved),
    )
    return shown


@dataclass
class Conversation:
    """The messages of the last run and what its model read, kept for a follow-up."""

    conversation_id: str
    goal: str
    messages: Messages = field(default_factory=list)
    read_digests: dict[str, str] = field(default_factory=dict)
    run_id: str = ""
    turns: int = 0

    def status(self) -> dict[str, Any]:
        return {
            "conversationId": self.conversation_id,
            "runId": self.run_id,
            "goal": self.goal,
            "turns": self.turns,
        }

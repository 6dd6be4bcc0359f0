"""What the run panel needs beyond the loop's events: which call a step made, what the person
answered, what its receipt holds; and the runs and conversation this daemon keeps.

The loop reports a step after its effect; the workspace notes what became of the effect, and
the receipt arrives, before that, on the same worker thread, so both are attached here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..actions import ToolAction
from ..context import Observation
from ..loop import AgentEvent, Messages
from ..receipts import EffectReceipt
from ..verdict import EffectOutcome
from ..workspace import Workspace
from .outcomes import effect_outcome
from .protocol import event_dict


class StepEvidence:
    """Turns each step into its event dict: the effect the workspace noted during the step (its
    call id, what became of it, why) and the receipt it left."""

    def __init__(self, run_id: str, workspace: Workspace | None = None) -> None:
        self.run_id = run_id
        self.workspace = workspace
        self._seen = 0
        self._receipts: dict[str, EffectReceipt] = {}
        self._lock = threading.Lock()

    def recorded(self, receipt: EffectReceipt) -> None:
        with self._lock:
            self._receipts[receipt.tool_call_id] = receipt

    def event(self, event: AgentEvent) -> dict[str, Any]:
        noted = self.workspace.effect_outcomes if self.workspace is not None else ()
        with self._lock:
            effect = noted[-1] if len(noted) > self._seen else None
            self._seen = len(noted)
            receipt = None if effect is None else self._receipts.pop(effect.call_id, None)
        return event_fields(event, self.run_id, effect, receipt)


def event_fields(
    event: AgentEvent,
    run_id: str | None,
    effect: EffectOutcome | None,
    receipt: EffectReceipt | None,
) -> dict[str, Any]:
    """The loop's event plus the call it made: ids, evidence digests, and the outcome read from
    what the workspace noted rather than from the observation text."""
    shown = event_dict(event)
    evidence = receipt.evidence if receipt is not None else {}
    if effect is not None and isinstance(event.action, ToolAction) and event.result is not None:
        shown["outcome"] = effect_outcome((effect,), event.result)
    shown.update(
        runId=run_id,
        toolCallId=None if effect is None else effect.call_id,
        receiptId=None if receipt is None else receipt.receipt_id,
        outputSha256=evidence.get("output_sha256"),
        resultSha256=evidence.get("result_sha256"),
        reason=None if effect is None or effect.state == "approved" else effect.reason,
    )
    return shown


@dataclass
class Conversation:
    """The messages of the last run and what its model read, kept for a follow-up."""

    conversation_id: str
    goal: str
    messages: Messages = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)  # which messages elide
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

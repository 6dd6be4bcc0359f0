"""The conversation this daemon keeps, so a follow-up continues it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..context.budget import Observation
from ..loop import Messages


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

"""The conversation this daemon keeps, so a follow-up continues it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...context.budget import Observation
from ...loop import Messages
from ...protocol import ConversationStatus


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

    def status(self) -> ConversationStatus:
        return ConversationStatus(
            conversationId=self.conversation_id, runId=self.run_id, goal=self.goal, turns=self.turns
        )

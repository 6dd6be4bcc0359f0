"""The steps a stopped run took, retold from its checkpoint's conversation, so a resume can show
the run's story before it goes on: each model turn's response, the action it parses to, and the
observation the model read after it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..actions import Action, parse_action
from ..context.budget import OBSERVATION_PREFIX
from ..errors import AgentError


@dataclass(frozen=True)
class EarlierStep:
    step: int
    response: str
    action: Action | None  # None: the response did not parse
    observation: str | None  # None: no tool result followed it


def earlier_steps(messages: Sequence[tuple[str, str]]) -> list[EarlierStep]:
    """One step per assistant message, numbered from 1, with the tool result that followed it."""
    steps: list[EarlierStep] = []
    for index, (role, content) in enumerate(messages):
        if role != "assistant":
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        observation = None
        if following is not None and following[0] == "user":
            text = following[1]
            if text.startswith(OBSERVATION_PREFIX):
                observation = text[len(OBSERVATION_PREFIX) :]
        try:
            action: Action | None = parse_action(content)
        except AgentError:
            action = None
        steps.append(EarlierStep(len(steps) + 1, content, action, observation))
    return steps


def earlier_words(state: str, reason: str | None) -> str:
    """How the person knows when those steps were taken: before the pause they asked for, or
    before an interruption (a crash, a reload, a daemon that shut down)."""
    return (
        "before the pause"
        if state == "paused" and reason == "paused"
        else ("before the interruption")
    )

"""The steps a stopped run took, retold from its record, so a resume can show the run's story
before it goes on: each model turn's response, the action it parses to, and the observation the
model read after it. Which message is a step's observation is the record's fact (`Observation`),
never read from the message's words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..actions import Action, FinalAction, parse_action
from ..context.budget import Observation, observation_text
from ..errors import AgentError


@dataclass(frozen=True)
class EarlierStep:
    step: int
    response: str
    action: Action | None  # None: the response did not parse
    observation: str | None  # None: no tool result followed it


def earlier_steps(
    messages: Sequence[tuple[str, str]], observations: Sequence[Observation]
) -> list[EarlierStep]:
    """One step per assistant message, numbered from 1, with the tool result that followed it
    as the conversation's record of its observations (`observations`) names it."""
    noted = {observation.index: observation for observation in observations}
    steps: list[EarlierStep] = []
    for index, (role, content) in enumerate(messages):
        if role != "assistant":
            continue
        try:
            action: Action | None = parse_action(content)
        except AgentError:
            action = None
        observation = None
        record = noted.get(index + 1)
        # A final answer is followed by no tool result: what follows it (the note a held one
        # was told, a follow-up's goal) is the model's next turn, not an observation.
        if record is not None and index + 1 < len(messages) and not isinstance(action, FinalAction):
            observation = observation_text(messages[index + 1][1], record)
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

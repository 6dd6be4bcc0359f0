"""Keeping the conversation inside its budget by eliding old reads and compacting old effects.

The model sees a shortened view; the run's events keep every observation whole. A read (which
can be done again) elides to one line; a completed effect whose receipt holds its result
compacts to the receipt-backed record of `compaction.py`. Both happen in large steps (above
`high` of the budget, down to `low`), so between steps the conversation only grows at its end
and the prompt cache keeps being reused, and a step is kept only when the count goes down. The
budget is the model's tokens, or with no token window the course's characters. The record of
which messages are observations (`Observation`) is kept with a conversation, so a follow-up
elides earlier turns' observations by the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import tools
from ..actions import ToolAction
from ..model import Model
from ..step_facts import SearchHits
from ..steps import StepResult

if TYPE_CHECKING:
    from .evidence import ArtifactRef

Messages = list[dict[str, str]]
TokenCounter = Callable[[Messages], int]
OBSERVATION_PREFIX = "Tool result:\n"
CHARS_PER_TOKEN = 4
MIN_INLINE_CHARS = 512  # the smallest maxInlineChars: here, so reading settings needs no store


def context_tokens(generate: object) -> int | None:
    """The prompt budget a model states (`Model.context_tokens`), or None for none."""
    tokens = generate.context_tokens if isinstance(generate, Model) else None
    return (
        tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else None
    )


def prompt_budget(window: int, response_tokens: int) -> int:
    """The prompt tokens a context window of `window` leaves: room is kept for one response
    unless the window is too small to spare it."""
    return window if window <= 2 * response_tokens else window - response_tokens


def count_chars(messages: Messages) -> int:
    """The course's measure of a conversation: the characters of its messages."""
    return sum(len(message["content"]) for message in messages)


def estimate_tokens(messages: Messages) -> int:
    """About four characters a token, plus a few tokens of chat template per message."""
    chars = sum(len(message["content"]) for message in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + 4 * len(messages)


def elided_summary(action: ToolAction, step: StepResult) -> str:
    """One line that says what was seen: `[read_file app.py, lines 1–120: elided]` (the lines
    from the step's record)."""
    arguments = action.arguments
    if action.tool == "read_file":
        where = str(arguments.get("path"))
        if step.lines is not None:
            where += ", " + step.lines.span()
        return f"[read_file {where}: elided]"
    if action.tool == "search_files":
        lines = "" if step.search is None else f"{shown_lines(step.search)} lines "
        return (
            f"[search_files {arguments.get('pattern')!r} in {arguments.get('path', '.')}: "
            f"{lines}elided]"
        )
    return f"[{action.tool} {arguments.get('path', '.')}: elided]"


def shown_lines(found: SearchHits) -> int:
    """The lines a search's observation showed, from the search's record: one a hit (one saying
    nothing matched when none did), and one saying where an incomplete search stopped."""
    return max(found.count, 1) + (0 if found.complete else 1)


@dataclass
class Observation:
    """One observation in a conversation: its message, what it would be elided (or compacted)
    to, and the artifact each names, which the conversation may then read ranges of."""

    index: int  # of its message in the view
    summary: str | None  # None: never elided
    length: int = 0  # characters of the observation as written; text after it is kept
    elided: bool = False
    shows: ArtifactRef | None = None  # named by the observation as written
    summary_shows: ArtifactRef | None = None  # named by its summary, once elided
    # Its summary is an effect's receipt-backed record, not a tool result (`compaction.py`).
    compacted: bool = False

    def shown_artifacts(self) -> tuple[ArtifactRef, ...]:
        shown = (self.shows, self.summary_shows if self.elided else None)
        return tuple(item for item in shown if item is not None)


def note_observation(
    observations: list[Observation],
    messages: Messages,
    action: ToolAction | None,
    step: StepResult | None,
    *,
    summary: str | None = None,
    shows: ArtifactRef | None = None,
    summary_shows: ArtifactRef | None = None,
) -> None:
    """Record the observation just appended as the last message of `messages` (`step`: the
    gate's record of it; None for a response that made no call); a read that was done elides
    to one line, anything else to `summary` (an effect's compacted record) if given."""
    compacted = summary is not None
    if action is not None and step is not None and _elidable(action.tool) and not step.is_error:
        summary = OBSERVATION_PREFIX + elided_summary(action, step)
        summary_shows = None
        compacted = False
    index = len(messages) - 1
    length = len(messages[index]["content"])
    observations.append(Observation(index, summary, length, False, shows, summary_shows, compacted))


def observation_text(content: str, observation: Observation) -> str | None:
    """What the model now reads as `observation`'s result in its message `content` (the loop
    writes `OBSERVATION_PREFIX` and the result): all after that lead-in, the elided line once
    elided; None once compacted to a record, which is no longer a tool result."""
    if observation.elided and observation.compacted:
        return None
    return content[len(OBSERVATION_PREFIX) :]


class ContextWindow:
    """The model's view of the conversation, held under `max_tokens`.

    `observations` (extended in place) is the record of the conversation's observations; a
    conversation continued later passes its record again so earlier ones can be elided too.
    """

    def __init__(
        self,
        messages: Messages,
        max_tokens: int,
        count_tokens: TokenCounter | None = None,
        *,
        high: float = 0.85,
        low: float = 0.5,
        keep_recent: int = 2,
        observations: list[Observation] | None = None,
    ) -> None:
        self.messages = messages
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens or estimate_tokens
        self.high = high
        self.low = low
        self.keep_recent = keep_recent
        self.elisions = 0
        self.observations = observations if observations is not None else []

    def observed(self, action: ToolAction | None, step: StepResult | None) -> None:
        """Note the observation just appended as the last message, by the gate's record."""
        note_observation(self.observations, self.messages, action, step)

    def fits(self) -> bool:
        """Elide, in one large step, when above `high`; False when even that is not enough."""
        before = self.count_tokens(self.messages)
        if before <= self.high * self.max_tokens:
            return True
        used: float = before
        tokens_per_char = used / max(count_chars(self.messages), 1)
        target = self.low * self.max_tokens
        kept = max(len(self.observations) - self.keep_recent, 0)
        undo: list[tuple[Observation, dict[str, str]]] = []
        for observation in self.observations[:kept]:
            if used <= target:
                break
            if observation.elided or observation.summary is None:
                continue
            if observation.index >= len(self.messages):
                continue  # a record that outlived its conversation's messages
            message = self.messages[observation.index]
            seen = message["content"][: observation.length or None]
            if len(observation.summary) >= len(seen):
                continue
            # Text joined after the observation (a follow-up's goal) is kept as it is.
            rest = message["content"][len(seen) :]
            used -= (len(seen) - len(observation.summary)) * tokens_per_char
            self.messages[observation.index] = {**message, "content": observation.summary + rest}
            observation.elided = True
            undo.append((observation, message))
        after = self.count_tokens(self.messages) if undo else before
        if after >= before:  # a step that saves nothing is not kept
            for observation, message in undo:
                self.messages[observation.index] = message
                observation.elided = False
            after = before
        else:
            self.elisions += len(undo)
        return after <= self.max_tokens


def _elidable(name: str) -> bool:
    tool = tools.tool_named(name)
    return tool is not None and tool.elidable

"""Each step's outcome as a field of the result, so the editor never reads it out of text.

The observation text is the model's; this is the one place that maps it to what the person is
told: ``ok``, ``denied`` (answered No), ``refused`` (the gate or the effect said ``error: …``),
``failed`` (an approved command ran and exited non-zero or timed out), or ``None`` when the step
proposed no tool.
"""

from __future__ import annotations

from typing import Literal

from ..actions import Action, ToolAction
from ..verdict import EffectOutcome

Outcome = Literal["ok", "denied", "refused", "failed"]

DENIED_OBSERVATION = "error: operator denied the tool action"


def step_outcome(action: Action | None, observation: str | None) -> Outcome | None:
    if not isinstance(action, ToolAction) or observation is None:
        return None
    if observation.startswith(DENIED_OBSERVATION):
        return "denied"
    if observation.startswith("error: "):
        return "refused"
    first_line = observation.split("\n", 1)[0]
    if first_line.startswith("status: ") and first_line != "status: 0":
        return "failed"
    return "ok"


def effect_outcome(outcomes: tuple[EffectOutcome, ...], observation: str) -> Outcome:
    """The outcome of one effect asked for outside a run, from what the workspace noted."""
    if not outcomes:
        return "refused" if observation.startswith("error: ") else "ok"
    last = outcomes[-1]
    if last.state == "rejected":
        return "denied"
    if last.state in ("refused", "failed"):
        return last.state
    if last.timed_out or (last.exit_status is not None and last.exit_status != 0):
        return "failed"
    return "ok"

"""Why a path was refused, for the person: the model's observation stays the neutral "path is
not accessible" (the same as for a missing file), while the person sees which rule holds. The
step's record says the gate kept the path from the model (`KeptFromModel`); the text is not
read."""

from __future__ import annotations

from ...actions import ToolAction
from ...files.paths import protection_rule
from ...loop import AgentEvent
from ...step_facts import KeptFromModel


def protected_by(event: AgentEvent, extra_patterns: tuple[str, ...]) -> str | None:
    """The rule that protects the step's path when the gate kept it from the model, else None."""
    step = event.step_result
    if step is None or not isinstance(step.detail, KeptFromModel):
        return None
    if not isinstance(event.action, ToolAction):
        return None
    return protection_rule(event.action.arguments.get("path"), extra_patterns)

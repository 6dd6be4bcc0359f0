"""Why a path was refused, for the person: the model's observation stays the neutral "path is
not accessible" (the same as for a missing file), while the person sees which rule holds."""

from __future__ import annotations

from ..actions import ToolAction
from ..files.paths import protection_rule
from ..loop import AgentEvent

REFUSED = "error: path is not accessible"


def protected_by(event: AgentEvent, extra_patterns: tuple[str, ...]) -> str | None:
    """The rule that protects the step's path when the step was refused for it, else None."""
    if event.result != REFUSED or not isinstance(event.action, ToolAction):
        return None
    return protection_rule(event.action.arguments.get("path"), extra_patterns)

"""Inspect a paused run and steer it with one visible message (the course's Day 6).

The status holds only what the checkpoint records (the task, the last completed action and
its evidence); the next step is the harness's boundary, never a guess at the model's plan.
Steering is one ordinary user message after the saved prefix, appended once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..actions import ToolAction, parse_action
from ..context.budget import OBSERVATION_PREFIX
from ..errors import AgentError
from ..loop import AgentLimits, AgentRun, Messages
from .checkpoint import AgentCheckpoint
from .resume import resume_agent

STEERING_PREFIX = "Operator steering:\n"
INCOMPLETE_BOUNDARY = "checkpoint does not end at a complete tool observation"


@dataclass(frozen=True)
class AgentStatus:
    """The public facts of a run paused at a complete observation."""

    task: str
    last_action: str
    last_evidence: str
    next_step: str


def inspect_checkpoint(checkpoint: AgentCheckpoint, *, evidence_chars: int = 160) -> AgentStatus:
    """A bounded status from the checkpoint alone: no model, no workspace."""
    if type(evidence_chars) is not int or evidence_chars <= 0:
        raise ValueError("evidence_chars must be a positive integer")
    action, evidence = completed_tool_boundary(checkpoint)
    return AgentStatus(
        task=checkpoint.task,
        last_action=json.dumps(
            {"tool": action.tool, **action.arguments}, sort_keys=True, separators=(",", ":")
        ),
        last_evidence=bounded_preview(evidence, evidence_chars),
        next_step=f"resume the model after the completed {action.tool} observation",
    )


def resume_with_steering(
    checkpoint: AgentCheckpoint,
    steering: str,
    generate: Callable[[Messages], str],
    workspace: Any,
    limits: AgentLimits | None = None,
) -> AgentRun:
    """Restore a fresh model, append one operator message after the saved prefix, continue."""
    if not isinstance(steering, str) or not steering.strip():
        raise ValueError("steering must not be empty")
    completed_tool_boundary(checkpoint)
    return resume_agent(
        checkpoint, generate, workspace, limits, appended=[steering_message(steering)]
    )


def steering_message(steering: str) -> dict[str, str]:
    return {"role": "user", "content": STEERING_PREFIX + steering}


def completed_tool_boundary(checkpoint: AgentCheckpoint) -> tuple[ToolAction, str]:
    """The last action and its observation, or why the checkpoint does not end with them."""
    checkpoint.validate()
    if len(checkpoint.messages) < 2:
        raise AgentError(INCOMPLETE_BOUNDARY)
    (action_role, action_text), (result_role, result_text) = checkpoint.messages[-2:]
    if (
        action_role != "assistant"
        or result_role != "user"
        or not result_text.startswith(OBSERVATION_PREFIX)
    ):
        raise AgentError(INCOMPLETE_BOUNDARY)
    try:
        action = parse_action(action_text)
    except AgentError as error:
        raise AgentError(f"checkpoint tool action is invalid: {error}") from error
    if not isinstance(action, ToolAction):
        raise AgentError("checkpoint tool action is invalid: expected a tool action")
    return action, result_text[len(OBSERVATION_PREFIX) :]


def bounded_preview(content: str, limit: int) -> str:
    """At most `limit` characters; a cut one ends with an ellipsis within the limit."""
    if len(content) <= limit:
        return content
    return content[: limit - 1] + "…"

"""Stop after a complete observation, then continue with a fresh model (the course's Day 4).

Both entry points run the one loop (`run_agent`): the first watches its observation boundary
and stops there, the second hands it the saved messages to continue as they are. No completed
tool call is submitted again: the restored conversation already holds its result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..actions import ToolAction
from ..errors import AgentError
from ..loop import AgentLimits, AgentRun, Messages, run_agent
from .checkpoint import AgentCheckpoint, create_checkpoint, restore_model_state, save_model_state


def run_to_checkpoint(
    task: str,
    generate: Callable[[Messages], str],
    workspace: Any,
    after_tool_calls: int = 1,
    limits: AgentLimits | None = None,
) -> AgentCheckpoint:
    """Run until `after_tool_calls` tool calls have their observations, then save the model
    state and the messages; a run that ends sooner is an error, not a partial checkpoint."""
    if type(after_tool_calls) is not int or after_tool_calls <= 0:
        raise ValueError("after_tool_calls must be a positive integer")
    if not isinstance(task, str) or not task.strip():
        raise ValueError("task must not be empty")
    saved: list[AgentCheckpoint] = []
    calls = 0

    def at_boundary(messages: Messages, action: ToolAction | None) -> None:
        nonlocal calls
        if action is None or saved:
            return
        calls += 1
        if calls == after_tool_calls:
            saved.append(create_checkpoint(task, messages, save_model_state(generate, messages)))

    run = run_agent(
        task,
        generate,
        workspace,
        limits,
        messages=[],
        should_stop=lambda: bool(saved),
        on_observation=at_boundary,
    )
    if saved:
        return saved[0]
    raise AgentError(f"run ended before checkpoint: {run.reason}")


def resume_agent(
    checkpoint: AgentCheckpoint,
    generate: Callable[[Messages], str],
    workspace: Any,
    limits: AgentLimits | None = None,
    *,
    appended: Sequence[dict[str, str]] = (),
) -> AgentRun:
    """Restore a fresh model and continue the loop after the saved observation, with
    `appended` (a steering message, say) after the saved prefix; the messages go on as they
    are."""
    checkpoint.validate()
    restore_model_state(generate, checkpoint.model)
    messages = checkpoint.message_list() + list(appended)
    return run_agent(checkpoint.task, generate, workspace, limits, messages=messages, resume=True)

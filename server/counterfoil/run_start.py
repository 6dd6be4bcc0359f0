"""One way to start a run that keeps its session on disk, for the terminal and the daemon.

Every such run is assembled in the same order: the front end makes the `Workspace` and the
session (`RecordedRun`, new, a follow-up or resumed), then `start_run` wires the session's
confirm around the front end's, the run's MCP tools and the project's `AGENTS.md`; once the
model is loaded, `RunSession.begin` records the model's identity (`models.identity.
run_identity`), attaches the session's record and starts (or restores) the conversation, `RunSession.run`
drives the loop on the session's messages and `RunSession.finish` writes the last checkpoint.
A front end keeps only how it asks (the confirm callbacks) and how it shows (the events).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .loop import AgentEvent, AgentLimits, AgentRun, run_agent

if TYPE_CHECKING:
    from .context.agents_file import AgentsFile
    from .context.budget import Observation
    from .gate.workspace import Workspace
    from .gate.workspace_record import ConfirmMcp, ConfirmProposal
    from .loop import Messages
    from .mcp.toolbox import McpToolbox
    from .sessions.recorded_run import RecordedRun


@dataclass
class RunSession:
    """One run being assembled: its goal, its gate, its session and the project's agents file.

    `stopping` says when an open approval stays open (the person stopped, paused or went
    away); `continued` and `observations` are a kept conversation that `goal` follows up."""

    goal: str
    workspace: Workspace
    recorded: RecordedRun
    stopping: Callable[[], bool]
    agents: AgentsFile | None = None
    continued: Messages | None = None
    observations: list[Observation] | None = None
    cause_of: Callable[[str], str | None] | None = None  # the daemon's review cause of a call

    @property
    def instructions(self) -> str | None:
        """The project's AGENTS.md text, as the system prompt carries it (None: none)."""
        return None if self.agents is None else self.agents.text

    def continues(self) -> Messages:
        """The conversation this run goes on from: a resumed run's checkpoint, a follow-up's
        kept conversation, or nothing (a new run)."""
        plan = self.recorded.plan
        if plan is not None:
            return plan.record.checkpoint.message_list()
        return [dict(message) for message in self.continued or []]

    def begin(self, model: object, identity: dict[str, Any] | None) -> None:
        """Record the loaded model's `identity` on the workspace (None: a script, none),
        attach the session's record (a new run's lock is taken here) and start the
        conversation, or restore the model and ask the open approval again (resumed)."""
        if identity is not None:
            self.workspace.model_identity = identity
        recorded = self.recorded
        recorded.attach(
            self.workspace,
            self.goal,
            self.stopping,
            continued=self.continued,
            observations=self.observations,
        )
        if self.cause_of is not None:
            assert recorded.recorder is not None
            recorded.recorder.cause_of = self.cause_of
        recorded.begin(model, self.workspace, self.instructions)

    def run(
        self,
        generate: Callable[[Messages], str],
        limits: AgentLimits | None,
        on_event: Callable[[AgentEvent], Any] | None,
        *,
        should_stop: Callable[[], bool],
        count_tokens: Callable[[Messages], int] | None,
    ) -> AgentRun:
        """The loop on the session's messages; `generate` is the model as the front end
        shows it (the session watches it for its checkpoints)."""
        return run_agent(
            self.goal,
            self.recorded.watch(generate),
            self.workspace,
            limits,
            on_event,
            should_stop=should_stop,
            count_tokens=count_tokens,
            instructions=self.instructions,
            **self.recorded.loop_arguments(),
        )

    def finish(self, reason: str, resumable: bool) -> None:
        """The last checkpoint: paused (resumable) or ended."""
        self.recorded.finish(reason, resumable)

    def release(self) -> None:
        """Give the run's lock back when the run never got going (the model did not load)."""
        self.recorded.release()


def start_run(
    goal: str,
    workspace: Workspace,
    recorded: RecordedRun,
    confirm: ConfirmProposal,
    stopping: Callable[[], bool],
    *,
    agents: AgentsFile | None = None,
    toolbox: McpToolbox | None = None,
    confirm_mcp: ConfirmMcp | None = None,
    continued: Messages | None = None,
    observations: list[Observation] | None = None,
    cause_of: Callable[[str], str | None] | None = None,
) -> RunSession:
    """The run of `goal` in `workspace`, kept by `recorded`: each proposal is asked through
    the session (an intent sealed before an effect runs) with the front end's `confirm`;
    `toolbox` (the person's MCP servers, or None) is offered with `confirm_mcp` asking each
    call."""
    workspace.confirm_proposal = recorded.confirming(confirm)
    if toolbox is not None:  # the person's servers: `mcp_call` is on, each call asked
        workspace.mcp_toolbox = toolbox
        workspace.confirm_mcp = confirm_mcp
    return RunSession(
        goal, workspace, recorded, stopping, agents, continued, observations, cause_of
    )

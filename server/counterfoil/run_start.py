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
    from .gate.rules import RuleSet
    from .gate.workspace import Workspace
    from .gate.workspace_record import ConfirmMcp, ConfirmProposal
    from .loop import Messages
    from .mcp.toolbox import McpToolbox
    from .sessions.recorded_run import RecordedRun


@dataclass
class RunSession:
    """One run being assembled: its goal, its gate, its session and the project's AGENTS.md.

    `recorded`: the session kept on disk (None: a run kept nowhere, as a branch's or an
    evaluation's); `stopping` says when an open approval stays open (the person stopped,
    paused or went away); `continued` and `observations` are the conversation `goal` goes on
    from (a kept one a follow-up continues, or a branch's checkpoint with its steering)."""

    goal: str
    workspace: Workspace
    recorded: RecordedRun | None = None
    stopping: Callable[[], bool] = lambda: False
    instructions: str | None = None  # the project's AGENTS.md text, as the prompt carries it
    continued: Messages | None = None
    observations: list[Observation] | None = None
    cause_of: Callable[[str], str | None] | None = None  # the daemon's review cause of a call

    def continues(self) -> Messages:
        """The conversation this run goes on from: a resumed run's checkpoint, a follow-up's
        kept conversation, or nothing (a new run)."""
        plan = None if self.recorded is None else self.recorded.plan
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
        if recorded is None:
            return
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
        on_event: Callable[[AgentEvent], Any] | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
        count_tokens: Callable[[Messages], int] | None = None,
    ) -> AgentRun:
        """The loop on the run's messages; `generate` is the model as the front end shows it
        (a session watches it for its checkpoints)."""
        if self.recorded is not None:
            generate = self.recorded.watch(generate)
            conversation = self.recorded.loop_arguments()
        elif self.continued is not None:
            conversation = {
                "messages": self.continued,
                "observations": self.observations if self.observations is not None else [],
                "resume": True,  # the conversation goes on as it is, its system prompt first
            }
        else:
            conversation = {}
        return run_agent(
            self.goal,
            generate,
            self.workspace,
            limits,
            on_event,
            should_stop=should_stop,
            count_tokens=count_tokens,
            instructions=self.instructions,
            **conversation,
        )

    def finish(self, reason: str, resumable: bool) -> None:
        """The last checkpoint: paused (resumable) or ended (nothing for a run kept nowhere)."""
        if self.recorded is not None:
            self.recorded.finish(reason, resumable)

    def release(self) -> None:
        """Give the run's lock back when the run never got going (the model did not load)."""
        if self.recorded is not None:
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
    rules: RuleSet | None = None,
) -> RunSession:
    """The run of `goal` in `workspace`, kept by `recorded`: each proposal is asked through
    the session (an intent sealed before an effect runs) with the front end's `confirm`,
    unless the person's approval `rules` decide it (the run's record keeps them);
    `toolbox` (the person's MCP servers, or None) is offered with `confirm_mcp` asking each
    call."""
    workspace.confirm_proposal = recorded.confirming(confirm)
    if rules is not None:
        workspace.approval_rules = rules
    if toolbox is not None:  # the person's servers: `mcp_call` is on, each call asked
        workspace.mcp_toolbox = toolbox
        workspace.confirm_mcp = confirm_mcp
    return RunSession(
        goal,
        workspace,
        recorded,
        stopping,
        None if agents is None else agents.text,
        continued,
        observations,
        cause_of,
    )

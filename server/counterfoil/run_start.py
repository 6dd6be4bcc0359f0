"""One way to open a run, for the terminal and the daemon (kept on disk), a fork's branch and
an evaluation's task (kept nowhere).

A front end describes the run in one value (`RunPlan`: the goal, the root's policy and log,
the session it keeps, how it asks and shows, and how it loads its model) and `open_run`
assembles it, the same way each time: the `Workspace` built complete (the session's confirm
around the front end's, its intents, the run's MCP tools and approval rules), the project's
`AGENTS.md` read, the model loaded by the front end's callable, `RunSession.begin` (the
model's identity recorded, the session's record attached, the conversation started or
restored), `RunSession.run` (the loop on the session's messages), `RunSession.finish` (the last
checkpoint), and the tools and the model closed. What comes back is a `RunOutcome`, which the
front end only shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from .context.agents_file import AgentsFile, read_agents_file
from .context.prompt import build_system_prompt
from .gate.workspace import Workspace
from .gate.workspace_setup import WorkspaceSetup
from .loop import AgentEvent, AgentLimits, AgentRun, run_agent, run_verdict

if TYPE_CHECKING:
    from .context.budget import Observation
    from .gate.policy import ToolPolicy
    from .gate.rules import RuleSet
    from .gate.workspace_setup import (
        ApprovalChannel,
        ConfirmMcp,
        ConfirmProposal,
        RuleApproved,
    )
    from .loop import Messages
    from .mcp.toolbox import McpToolbox
    from .receipts import ReceiptStore
    from .sessions.recorded_run import RecordedRun
    from .verdict import RunVerdict


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
    system_prompt_anew: bool = False  # `continued`'s system prompt rebuilt, as a resume's is

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
            self.workspace.record_model(identity)
        recorded = self.recorded
        if recorded is None:
            self._system_prompt_anew()
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

    def _system_prompt_anew(self) -> None:
        """A branch's conversation goes on under today's system prompt, as a resumed run's does
        (the tools, the root and AGENTS.md as they are now)."""
        messages = self.continued
        if self.system_prompt_anew and messages and messages[0].get("role") == "system":
            messages[0] = {
                "role": "system",
                "content": build_system_prompt(self.workspace, self.instructions),
            }

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


NotLoaded = TypeVar("NotLoaded")  # what a front end answers when its model did not load


@dataclass(frozen=True)
class LoadedModel:
    """The model a front end loaded for a run: `model` as loaded (its state is saved and
    restored, its context window sets the limits), `generate` as the front end shows it to
    the loop, its `identity` for the record (None: a script), and what closes it."""

    model: object
    generate: Callable[[Messages], str]
    identity: dict[str, Any] | None
    count_tokens: Callable[[Messages], int] | None = None
    close: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class RunPlan(Generic[NotLoaded]):
    """One run, as a front end describes it: the terminal's and the daemon's (kept on disk),
    a branch's of a fork and an evaluation's (kept nowhere).

    What it works on: `goal`, the root's `policy`, the receipt `store`, the `session` that
    keeps it (new, a follow-up or resumed; None: kept nowhere) and the conversation
    `continued` with its `observations` and `read_digests` (a follow-up's, or a branch's
    checkpoint with its steering, whose system prompt is rebuilt when `system_prompt_anew`).
    How it asks: `confirm` each effect (and `confirm_mcp` each MCP call of `toolbox`), `rules`
    that approve without asking and `on_rule_approved` told of each, `approval_via` (or
    `via_of` a proposal) named in each receipt, `stop_commands` ending a running command. How it shows: `on_event` for each step, `opened` once the
    workspace is built (the run's header), `begun` once the conversation is started or
    restored. When it stops: `should_stop` ends the loop at its next boundary, `stopping`
    keeps an open approval open, `resumable` says why a run that stopped short stays
    resumable (None: it ended), `on_interrupt` is told of a Ctrl-C (None: it is raised).

    `load` loads the model once the workspace is opened, or answers why not (`NotLoaded`,
    returned as it is); `limits` are the run's for the model loaded. `agents` is the
    project's AGENTS.md as the front end read it already, or "read" (read here, when
    `read_agents`)."""

    goal: str
    policy: ToolPolicy
    store: ReceiptStore
    confirm: ConfirmProposal
    load: Callable[[RunSession, AgentsFile | None], LoadedModel | NotLoaded]
    limits: Callable[[object], AgentLimits]
    session: RecordedRun | None = None
    on_event: Callable[[AgentEvent], Any] | None = None
    should_stop: Callable[[], bool] = lambda: False
    stopping: Callable[[], bool] = lambda: False
    resumable: Callable[[], str | None] = lambda: None
    run_id: str | None = None
    continued: Messages | None = None
    observations: list[Observation] | None = None
    system_prompt_anew: bool = False
    read_digests: dict[str, str] | None = None
    toolbox: McpToolbox | None = None
    confirm_mcp: ConfirmMcp | None = None
    rules: RuleSet | None = None
    on_rule_approved: RuleApproved | None = None
    approval_via: str = "cli"
    via_of: ApprovalChannel | None = None
    stop_commands: threading.Event | None = None
    cause_of: Callable[[str], str | None] | None = None  # the daemon's review cause of a call
    agents: AgentsFile | None | Literal["read"] = "read"
    read_agents: bool = True
    opened: Callable[[RunSession, AgentsFile | None], None] = lambda run, agents: None
    begun: Callable[[RunSession], None] = lambda run: None
    on_interrupt: Callable[[], None] | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What became of an opened run: its `workspace`, the loop's `run` (None: a Ctrl-C
    stopped it), the `reason` it ended for (a resumable stop's own word), whether it stays
    `resumable`, its `verdict`, the model's `identity` and the `agents` file it was given."""

    workspace: Workspace
    run: AgentRun | None
    reason: str
    resumable: bool
    verdict: RunVerdict
    identity: dict[str, Any] | None
    agents: AgentsFile | None


def open_run(plan: RunPlan[NotLoaded]) -> RunOutcome | NotLoaded:
    """Assemble and run `plan` (see the module's docstring); the tools are closed, the
    session's lock given back and the model closed however the run ends."""
    workspace = Workspace(plan.policy, receipt_store=plan.store, setup=_setup(plan))
    agents = plan.agents
    if agents == "read":
        agents = read_agents_file(workspace, plan.policy.root) if plan.read_agents else None
    started = RunSession(
        plan.goal,
        workspace,
        recorded=plan.session,
        stopping=plan.stopping,
        instructions=None if agents is None else agents.text,
        continued=plan.continued,
        observations=plan.observations,
        cause_of=plan.cause_of,
        system_prompt_anew=plan.system_prompt_anew,
    )
    loaded: LoadedModel | None = None
    try:
        plan.opened(started, agents)
        model = plan.load(started, agents)
        if not isinstance(model, LoadedModel):
            return model
        loaded = model
        ended = _begun_and_run(plan, started, loaded)
        why = plan.resumable()
        reason = why or ("interrupted" if ended is None else ended.reason)
        started.finish(reason, why is not None)
        verdict = run_verdict(workspace) if ended is None else ended.verdict
        return RunOutcome(
            workspace, ended, reason, why is not None, verdict, model.identity, agents
        )
    finally:
        if plan.toolbox is not None:
            plan.toolbox.close()  # every server this run started stops with it
        started.release()  # a no-op once the session has finished, or with none
        if loaded is not None:
            loaded.close()


def _begun_and_run(
    plan: RunPlan[NotLoaded], started: RunSession, loaded: LoadedModel
) -> AgentRun | None:
    """The conversation begun and the loop run (None: a Ctrl-C the front end was told of)."""
    try:
        started.begin(loaded.model, loaded.identity)
        plan.begun(started)
        return started.run(
            loaded.generate,
            plan.limits(loaded.model),
            plan.on_event,
            should_stop=plan.should_stop,
            count_tokens=loaded.count_tokens,
        )
    except KeyboardInterrupt:
        if plan.on_interrupt is None:
            raise
        plan.on_interrupt()
        return None


def _setup(plan: RunPlan[NotLoaded]) -> WorkspaceSetup:
    """The workspace's setup for `plan`: each proposal asked with the front end's confirm
    (through the session, when one keeps the run: an intent sealed before an effect runs), unless the person's approval
    rules decide it; the MCP servers offered, each call asked."""
    session = plan.session
    setup = WorkspaceSetup(
        confirm_proposal=plan.confirm,
        run_id=plan.run_id or (None if session is None else session.run_id),
        approval_via=plan.approval_via,
        via_of=plan.via_of,
        read_digests=plan.read_digests or (None if session is None else session.read_digests),
        stop_commands=plan.stop_commands,
        on_rule_approved=plan.on_rule_approved,
        mcp_toolbox=plan.toolbox,
        confirm_mcp=plan.confirm_mcp if plan.toolbox is not None else None,
    )
    if plan.rules is not None:
        setup = replace(setup, approval_rules=plan.rules)
    return setup if session is None else session.kept(setup)

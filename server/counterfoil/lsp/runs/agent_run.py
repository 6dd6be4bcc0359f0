"""One agent run in the daemon, recorded on disk as it goes, as a terminal run is.

The run writes its checkpoint at each complete observation, when an approval is asked and
before each approved effect (its intent), through the recorder the terminal uses
(`sessions.RecordedRun`), so a run whose daemon dies can be resumed by the next one. A
resumed run asks its open approval again as a fresh proposal, re-checked against the disk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ... import protocol as messages
from ...context.agents_file import AgentsFile
from ...context.budget import Observation
from ...loop import AgentEvent
from ...models.errors import ModelLoadError
from ...models.hub.download import DownloadCancelled
from ...models.usage import usage_line
from ...protocol import notice, wire
from ...run_start import LoadedModel, RunOutcome, RunPlan, RunSession, open_run
from ...sessions.earlier_steps import EarlierStep, earlier_steps, earlier_words
from ...sessions.intents import Settled
from ...sessions.recorded_run import RecordedRun
from ...sessions.reopen import ResumePlan
from ...sessions.store import SessionStore
from ..channel import ClientChannel
from ..mcp_servers.mcp_servers import run_toolbox
from ..model_service.model_download import ModelDownloads
from ..model_service.model_host import HostedGenerate, ModelHost, ModelLoadFailed
from .disabled_note import enabled_by
from .jobs import Job, WorkspaceUnavailable, open_log, rule_told
from .protected_note import protected_by
from .run_messages import event_message, failed_run, run_result
from .run_record import Conversation

EVENT_METHOD = messages.method_of(messages.AgentEvent)
PROPOSED_BEFORE_STEERING = (
    "proposed before your message: the model has not read it yet (Reject with a reason, and it "
    "proposes again after reading it)"
)


@dataclass
class RunEnd:
    """What the run answers, and the conversation a follow-up continues (None: none kept)."""

    result: messages.RunResult
    conversation: Conversation | None


@dataclass(frozen=True)
class RunRequest:
    """One run the daemon was asked for: the job and goal, what it continues (a follow-up's
    conversation, a resumed run's plan), what was settled before it, and the agents file."""

    job: Job
    goal: str
    run_id: str
    continued: Conversation | None
    plan: ResumePlan | None
    settled: list[Settled]
    agents: AgentsFile | None
    steer: str | None = None
    model_named: bool = True  # False: an endpoint's run with no model set asks for the server's


def earlier_observations(request: RunRequest) -> Sequence[Observation]:
    """The record of which messages of the conversation a run goes on from are observations:
    a resumed run's session record, a follow-up's kept conversation, or none."""
    if request.plan is not None:
        return request.plan.record.observations
    return () if request.continued is None else request.continued.observations


@dataclass
class AgentRunner:
    """What an agent run needs of the daemon: the client, the model host, the downloads."""

    channel: ClientChannel
    models: ModelHost
    downloads: ModelDownloads

    def run(self, request: RunRequest) -> RunEnd:
        """The run `request` describes, opened as every run kept on disk is (`open_run`)."""
        job, plan, continued = request.job, request.plan, request.continued
        try:
            policy, store, unsubscribe = open_log(self.channel, job, tell=False)
        except WorkspaceUnavailable as error:  # the run's result says it: one error, shown once
            if plan is not None:
                plan.lock.release()
            return RunEnd(failed_run(error.reason, error.message), None)
        settings = job.settings
        sessions = SessionStore(settings.receipt_log_path(job.root))
        model_spec = settings.model or None
        recorded = RecordedRun(
            sessions,
            store,
            plan,
            request.steer,
            request.settled,
            self.channel.log,
            model_spec=model_spec,
        )
        token = self.channel.begin_progress("Counterfoil", request.goal[:80])
        shown = ShownRun(self, request, recorded, token)
        try:
            outcome = open_run(
                RunPlan(
                    request.goal,
                    policy,
                    store,
                    job.bridge,
                    shown.load,
                    settings.limits,
                    session=recorded,
                    on_event=shown.on_event,
                    should_stop=shown.stop_or_pause,
                    # an open approval stays open
                    stopping=lambda: job.stopping or job.bridge.withdrew,
                    resumable=shown.resumable,
                    run_id=request.run_id,
                    continued=None if continued is None else continued.messages,
                    observations=None if continued is None else continued.observations,
                    read_digests=plan.read_digests
                    if plan is not None
                    else (None if continued is None else continued.read_digests),
                    toolbox=run_toolbox(settings, policy, job.bridge, self.channel),
                    confirm_mcp=recorded.confirming(job.bridge),  # resumed: asked again
                    rules=settings.approval_rules,
                    on_rule_approved=rule_told(self.channel, job.root, request.run_id),
                    approval_via="editor",
                    stop_commands=job.bridge.stop,
                    cause_of=job.bridge.cause_of,
                    agents=request.agents,
                    begun=shown.begun,
                )
            )
            return outcome if isinstance(outcome, RunEnd) else shown.ended(outcome)
        finally:
            unsubscribe()
            self.channel.end_progress(token, "done")


class ShownRun:
    """How the daemon shows one run: its model loaded (or why not, as the run's result), its
    steps numbered as the person reads them, its earlier steps retold, what it answers."""

    def __init__(
        self, runner: AgentRunner, request: RunRequest, recorded: RecordedRun, token: str | None
    ) -> None:
        self.channel, self.runner, self.request = runner.channel, runner, request
        self.job, self.recorded, self.token = request.job, recorded, token
        # A resumed run's steps, and a follow-up's, go on from the conversation's: the loop
        # counts this part's steps from 1, the person reads the run's.
        self.before = 0
        self.told_before: list[EarlierStep] = []

    def stop_or_pause(self) -> bool:
        return self.job.stopping or self.job.interrupted

    def resumable(self) -> str | None:
        job = self.job
        if job.closing:
            return "interrupted"
        return "paused" if job.pausing and not job.stopping else None

    def activity(self, phase: messages.ActivityPhase, message: str, step: int | None) -> None:
        shown = messages.RunActivity(
            runId=self.request.run_id, phase=phase, step=step, message=message
        )
        self.channel.notify(*notice(shown))

    def report(self, step: int, phase: messages.ActivityPhase, message: str) -> None:
        self.channel.report_progress(self.token, f"step {step + self.before}: {message}")
        self.activity(phase, message, step + self.before)

    def on_text(self, step: int, text: str, thinking: bool) -> None:
        shown = messages.ModelText(
            runId=self.request.run_id, step=step + self.before, text=text, thinking=thinking
        )
        self.channel.notify(*notice(shown))

    def on_event(self, event: AgentEvent) -> None:
        event = replace(event, step=event.step + self.before)
        patterns = self.job.settings.protected_patterns
        shown = event_message(
            event,
            self.request.run_id,
            event.model_note,
            protected_by(event, patterns),
            enabled_by(event),
        )
        self.channel.notify(*notice(shown))
        self.channel.log(f"step {event.step} response: {event.response}")
        self.channel.log(f"step {event.step} action: {json.dumps(wire(shown.action))}")
        if event.result is not None:
            self.channel.log(f"step {event.step} observation: {event.result}")

    def load(self, started: RunSession, agents: object) -> LoadedModel | RunEnd:
        """The model, on disk and loaded (or the run's result saying why not), the run's
        earlier steps retold and its identity as the person gave the model."""
        job, request = self.job, self.request
        settings, root = job.settings, job.root
        if job.stopping:
            return RunEnd(failed_run("cancelled", None), None)
        try:
            if not settings.endpoint:
                self.runner.downloads.ensure_on_disk(settings.model, lambda: job.stopping)
        except DownloadCancelled:
            return RunEnd(failed_run("cancelled", None), None)
        except ModelLoadError as error:  # said once, by the run's result
            return RunEnd(failed_run("model_error", str(error)), None)
        try:
            loaded = self.runner.models.load(
                settings,
                root,
                lambda phase, message: self.activity(phase, message, None),
                model_named=request.model_named,
            )
        except ModelLoadFailed as error:  # said once, by the run's result
            return RunEnd(failed_run("model_error", str(error)), None)
        generate = HostedGenerate(
            self.runner.models,
            loaded,
            self.report,
            should_stop=self.stop_or_pause,
            on_text=self.on_text,
        )
        self.channel.log(
            f"run {'resumed' if self.recorded.resuming else 'started'}: {request.goal}"
        )
        self.retell(started)
        plan = request.plan
        if request.steer is not None and plan is not None and plan.record.pending is not None:
            job.bridge.note = PROPOSED_BEFORE_STEERING  # asked again before the model reads it
        from ...models.identity import run_identity

        # As the person gave it: none when only an endpoint was set (the CLI's spec, too).
        given = "" if settings.endpoint and not request.model_named else settings.model
        identity = run_identity(loaded, given)
        return LoadedModel(loaded, generate, identity, generate.count_tokens)

    def retell(self, started: RunSession) -> None:
        """A resumed run's story so far, from its record, before it asks its open approval
        again."""
        request = self.request
        self.told_before = earlier_steps(
            [(message["role"], message["content"]) for message in started.continues()],
            earlier_observations(request),
        )
        if request.plan is None:
            return
        record = request.plan.record
        words = earlier_words(record.state, record.reason)
        for told in self.told_before:
            earlier = AgentEvent(told.step, told.response, told.action, told.observation)
            shown = replace(event_message(earlier, request.run_id), earlier=words)
            self.channel.notify(*notice(shown))

    def begun(self, started: RunSession) -> None:
        """The open approval a resume asked again, answered: its own step."""
        self.job.bridge.note = None
        self.before = len(self.told_before)
        asked_again = self.recorded.asked_again
        if asked_again is not None:
            response, action, step = asked_again
            self.on_event(AgentEvent(1, response, action, step.observation, step))
            self.before += 1

    def ended(self, outcome: RunOutcome) -> RunEnd:
        """The run's result, and the conversation a follow-up continues when it ended."""
        run, reason, request = outcome.run, outcome.reason, self.request
        assert run is not None  # no Ctrl-C reaches a daemon's run
        self.channel.log(f"run ended: {reason}; verdict: {run.verdict.summary()}")
        result = run_result(run, reason, usage_line(run.responses), outcome.identity)
        if outcome.resumable:
            return RunEnd(result, None)
        recorded = self.recorded
        kept = request.continued or Conversation(request.run_id, request.goal, recorded.messages)
        kept.messages = recorded.messages
        kept.observations = recorded.observations  # so a follow-up elides them too
        kept.read_digests = outcome.workspace.read_digests
        kept.run_id = request.run_id
        kept.turns += 1
        return RunEnd(result, kept)

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
from ...run_start import RunSession, start_run
from ...sessions.earlier_steps import earlier_steps, earlier_words
from ...sessions.intents import Settled
from ...sessions.recorded_run import RecordedRun
from ...sessions.reopen import ResumePlan
from ...sessions.store import SessionStore
from ..channel import ClientChannel
from ..mcp_servers.mcp_servers import run_toolbox
from ..model_service.model_download import ModelDownloads
from ..model_service.model_host import HostedGenerate, ModelHost, ModelLoadFailed
from .disabled_note import enabled_by
from .jobs import Job, WorkspaceUnavailable, open_workspace
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
        job, run_id, continued, plan = request.job, request.run_id, request.continued, request.plan
        settings, root = job.settings, job.root
        read_digests = None if continued is None else continued.read_digests
        try:
            workspace, unsubscribe = open_workspace(
                self.channel,
                job,
                run_id=run_id,
                read_digests=plan.read_digests if plan is not None else read_digests,
                tell=False,  # the run's result says it: one error, shown once
            )
        except WorkspaceUnavailable as error:
            if plan is not None:
                plan.lock.release()
            return RunEnd(failed_run(error.reason, error.message), None)
        sessions = SessionStore(settings.receipt_log_path(root))
        recorded = RecordedRun(
            sessions,
            workspace.receipt_store,
            plan,
            request.steer,
            request.settled,
            say=self.channel.log,
            model_spec=settings.model or None,
        )
        toolbox = run_toolbox(settings, workspace.policy, job.bridge, self.channel)
        started = start_run(
            request.goal,
            workspace,
            recorded,
            job.bridge,
            lambda: job.stopping or job.bridge.withdrew,  # an open approval stays open
            agents=request.agents,
            toolbox=toolbox,
            confirm_mcp=recorded.confirming(job.bridge),  # resumed: asked again
            continued=None if continued is None else continued.messages,
            observations=None if continued is None else continued.observations,
            cause_of=job.bridge.cause_of,
            rules=settings.approval_rules,
        )
        token = self.channel.begin_progress("Counterfoil", request.goal[:80])
        try:
            return self._go(request, started, token)
        finally:
            if toolbox is not None:
                toolbox.close()  # every server this run started stops with it
            recorded.release()  # a no-op once the recorder has finished
            unsubscribe()
            self.channel.end_progress(token, "done")

    def _go(self, request: RunRequest, started: RunSession, token: str | None) -> RunEnd:
        job, goal, run_id, continued = request.job, request.goal, request.run_id, request.continued
        recorded, workspace = started.recorded, started.workspace
        assert recorded is not None  # every daemon run keeps its session
        settings, root = job.settings, job.root
        if job.stopping:
            return RunEnd(failed_run("cancelled", None), None)
        try:
            if not settings.endpoint:
                self.downloads.ensure_on_disk(settings.model, lambda: job.stopping)
        except DownloadCancelled:
            return RunEnd(failed_run("cancelled", None), None)
        except ModelLoadError as error:  # said once, by the run's result
            return RunEnd(failed_run("model_error", str(error)), None)

        def activity(phase: messages.ActivityPhase, message: str, step: int | None) -> None:
            shown = messages.RunActivity(runId=run_id, phase=phase, step=step, message=message)
            self.channel.notify(*notice(shown))

        try:
            loaded = self.models.load(
                settings,
                root,
                lambda phase, message: activity(phase, message, None),
                model_named=request.model_named,
            )
        except ModelLoadFailed as error:  # said once, by the run's result
            return RunEnd(failed_run("model_error", str(error)), None)

        # A resumed run's steps, and a follow-up's, go on from the conversation's: the loop
        # counts this part's steps from 1, the person reads the run's.
        before = [0]

        def report(step: int, phase: messages.ActivityPhase, message: str) -> None:
            self.channel.report_progress(token, f"step {step + before[0]}: {message}")
            activity(phase, message, step + before[0])

        def on_text(step: int, text: str, thinking: bool) -> None:
            shown = messages.ModelText(
                runId=run_id, step=step + before[0], text=text, thinking=thinking
            )
            self.channel.notify(*notice(shown))

        def on_event(event: AgentEvent) -> None:
            event = replace(event, step=event.step + before[0])
            shown = event_message(
                event,
                run_id,
                event.model_note,
                protected_by(event, settings.protected_patterns),
                enabled_by(event),
            )
            self.channel.notify(*notice(shown))
            self.channel.log(f"step {event.step} response: {event.response}")
            self.channel.log(f"step {event.step} action: {json.dumps(wire(shown.action))}")
            if event.result is not None:
                self.channel.log(f"step {event.step} observation: {event.result}")

        stop_or_pause = lambda: job.stopping or job.interrupted
        generate = HostedGenerate(
            self.models, loaded, report, should_stop=stop_or_pause, on_text=on_text
        )
        self.channel.log(f"run {'resumed' if recorded.resuming else 'started'}: {goal}")
        told_before = earlier_steps(
            [(message["role"], message["content"]) for message in started.continues()],
            earlier_observations(request),
        )
        if request.plan is not None:  # the run's story so far, from its record, before it
            record = request.plan.record  # asks its open approval again
            words = earlier_words(record.state, record.reason)
            for told in told_before:
                earlier = AgentEvent(told.step, told.response, told.action, told.observation)
                shown = replace(event_message(earlier, run_id), earlier=words)
                self.channel.notify(*notice(shown))
        plan = request.plan
        if request.steer is not None and plan is not None and plan.record.pending is not None:
            job.bridge.note = PROPOSED_BEFORE_STEERING  # asked again before the model reads it
        from ...models.identity import run_identity

        # As the person gave it: none when only an endpoint was set (the CLI's spec, too).
        given = "" if settings.endpoint and not request.model_named else settings.model
        identity = run_identity(loaded, given)
        try:
            started.begin(loaded, identity)
        finally:
            job.bridge.note = None
        before[0] = len(told_before)
        if recorded.asked_again is not None:  # the open approval, answered again: its own step
            response, action, step = recorded.asked_again
            on_event(AgentEvent(1, response, action, step.observation, step))
            before[0] += 1
        run = started.run(
            generate,
            settings.limits(loaded),
            on_event,
            should_stop=stop_or_pause,
            count_tokens=generate.count_tokens,
        )
        resumable = job.closing or (job.pausing and not job.stopping)
        reason = run.reason
        if resumable:
            reason = "interrupted" if job.closing else "paused"
        started.finish(reason, resumable)
        self.channel.log(f"run ended: {reason}; verdict: {run.verdict.summary()}")
        result = run_result(run, reason, usage_line(run.responses), identity)
        kept = None
        if not resumable:
            kept = continued or Conversation(run_id, goal, recorded.messages)
            kept.messages = recorded.messages
            kept.observations = recorded.observations  # so a follow-up elides them too
            kept.read_digests = workspace.read_digests
            kept.run_id = run_id
            kept.turns += 1
        return RunEnd(result, kept)

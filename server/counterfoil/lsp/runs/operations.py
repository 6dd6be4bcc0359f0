"""The session's one operation at a time: an agent run (new, a follow-up, or a resumed one),
a validation command, a revert, a branch selection; and the pause of a running agent run.

Each request's handler is a method here, taking its params message: `protocol.REQUESTS` marks
them `ONE_AT_A_TIME` (a resume `ONE_AT_A_TIME_CHECKED_OFF_LOOP`), and `_start` refuses one
while another goes.

Each runs on its own worker thread with the settings it started with (a change applies to the
next one), a fresh Workspace and a ReceiptStore read afresh from the log, so receipts other
processes appended are part of the chain. Every run keeps its checkpoint on disk (see
`agent_run`); the run book keeps the last run's conversation, so a follow-up continues it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import protocol as messages
from ...actions import ToolAction
from ...context.agents_file import AgentsFile, read_agents_file
from ...errors import AgentError
from ...gate.workspace import Workspace
from ...protocol import notice
from ...receipts import ReceiptStore
from ...settings.refused import unchosen_model
from ...settings.table import Settings
from ...steps import StepResult, refusal
from ..approvals.confirm_bridge import ConfirmBridge
from ..channel import ClientChannel
from ..folder_settings.folder_settings import folder_settings_result
from ..session_state import SessionState
from ..settings import model_named
from .agent_run import AgentRunner, RunRequest
from .jobs import (
    Job,
    ModelNotChosen,
    NoConversation,
    NoWorkspaceRoot,
    SessionBusy,
    WorkspaceUnavailable,
    open_workspace,
)
from .run_book import RunBook
from .run_messages import failed_run, receipt_message, step_fields
from .run_record import Conversation

if TYPE_CHECKING:  # the sessions package loads when a run first needs it
    from ...sessions.intents import Settled
    from ...sessions.reopen import ResumePlan

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    """What an operation found on the disk before it started, under the one-at-a-time lock:
    the intents an interrupted run left, settled first, and a resume's checked plan (None for
    anything else)."""

    settled: list[Settled] = field(default_factory=list)
    plan: ResumePlan | None = None


class Operations:
    def __init__(
        self, channel: ClientChannel, state: SessionState, book: RunBook, runner: AgentRunner
    ) -> None:
        self._channel = channel
        self._state = state
        self._book = book
        self._runner = runner
        self._job: Job | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        with self._lock:
            return self._job is not None and not self._job.result.done()

    @property
    def job(self) -> Job | None:
        with self._lock:
            return self._job

    def run(self, params: messages.RunParams) -> Job:
        """A new conversation: the kept one is forgotten."""
        return self._start(
            "run", lambda job, prepared: self._run(job, params.goal, None, prepared), self._settle
        )

    def follow_up(self, params: messages.FollowUpParams) -> Job:
        """Continue the kept conversation with the person's next message."""
        conversation = self._book.conversation
        if conversation is None:
            raise NoConversation("no conversation to continue")
        return self._start(
            "run",
            lambda job, prepared: self._run(job, params.text, conversation, prepared),
            self._settle,
        )

    def resume(self, params: messages.ResumeParams) -> Job:
        """Continue a run kept on disk (interrupted or paused), its checks made first: raises
        CheckpointRefused with one sentence when it cannot go on, and nothing runs."""
        from ...sessions.reopen import open_for_resume
        from ...sessions.store import SessionStore

        def prepare(settings: Settings, root: Path) -> Prepared:
            settled = self._settle(settings, root).settled
            sessions = SessionStore(settings.receipt_log_path(root))
            plan = open_for_resume(sessions, settings.policy(root).root, params.runId)
            return Prepared(settled, plan)

        def work(job: Job, prepared: Prepared) -> messages.RunResult:
            plan = prepared.plan
            assert plan is not None  # `prepare` ran and checked it
            goal = plan.record.checkpoint.task  # the run goes on with its own goal
            return self._run(job, goal, None, prepared, params.steer)

        return self._start("run", work, prepare)

    def pause(self) -> messages.PauseResult:
        """Ask the running agent run to pause; `pausing` is false when no run goes."""
        job = self.job
        if job is None or job.result.done() or job.kind != "run":
            return messages.PauseResult(pausing=False, runId=None)
        job.pause()
        run_id = job.run_id  # None until the run has its id: then nothing is said to pause
        return messages.PauseResult(pausing=run_id is not None, runId=run_id)

    def _settle(self, settings: Settings, root: Path) -> Prepared:
        """Settle from the disk what an interrupted run left (an intent without a receipt),
        once, before any run of this root goes on; the person is told what was found."""
        from ...sessions.intents import settle_intents
        from ...sessions.store import SessionStore

        log = settings.receipt_log_path(root)
        sessions = SessionStore(log)
        if not sessions.folder.is_dir():
            return Prepared()
        try:
            settled = settle_intents(sessions, ReceiptStore(log))
        except (AgentError, OSError) as error:
            self._channel.log(f"could not settle an interrupted effect: {error}")
            return Prepared()
        for found in settled:
            self._channel.log(found.line)
            self._channel.show_message("info", f"Counterfoil {found.line}")
        return Prepared(settled)

    def run_validation(self, params: messages.RunValidationParams) -> Job:
        return self._start("validation", lambda job, _: self._validate(job, params.argv))

    def revert(self, params: messages.RevertParams) -> Job:
        """Undo a file effect from its receipt, asked like any effect (`counterfoil/confirm`)."""
        call_id = params.toolCallId
        return self._start(
            "revert",
            lambda job, _: self._one_effect(
                job, f"revert {call_id}", lambda w: w.revert_step(call_id)
            ),
        )

    def select_branch(self, params: messages.SelectBranchParams) -> Job:
        """Apply a forked run's branch, each change asked like any effect (`counterfoil/confirm`)."""
        from .branches import select_answer

        return self._start(
            "selectBranch",
            lambda job, _: select_answer(
                params.branch, lambda: open_workspace(self._channel, job), job.bridge
            ),
        )

    def _start(
        self,
        kind: str,
        work: Callable[[Job, Prepared], Any],
        prepare: Callable[[Settings, Path], Prepared] | None = None,
    ) -> Job:
        with self._lock:
            if self._job is not None and not self._job.result.done():
                raise SessionBusy(f"a {self._job.kind} is already in progress")
            root = self._state.root
            if root is None:
                raise NoWorkspaceRoot("no workspace folder is open")
            if kind == "run" and self._state.decide_again():
                self._channel.notify(*notice(folder_settings_result(self._state)))
            unchosen = unchosen_model(self._state.layered.refused)
            if kind == "run" and unchosen is not None:
                raise ModelNotChosen(
                    f"no run starts with a model you did not choose: {unchosen.line()}; "
                    "correct the setting first"
                )
            settings = self._state.settings
            prepared = Prepared() if prepare is None else prepare(settings, root)
            bridge = ConfirmBridge(self._channel, root, settings.confirm_timeout_seconds)
            job = Job(kind, bridge, settings, root, self._state.granted_by())
            self._job = job

        def body() -> None:
            try:
                outcome = work(job, prepared)
            except Exception as error:  # the client always gets an answer
                logger.exception("%s failed", kind)
                outcome = failed_run("internal_error", f"{type(error).__name__}: {error}")
            job.result.set_result(outcome)

        job.thread = threading.Thread(target=body, name=f"counterfoil-{kind}", daemon=True)
        job.thread.start()
        return job

    def _run(
        self,
        job: Job,
        goal: str,
        continued: Conversation | None,
        prepared: Prepared,
        steer: str | None = None,
    ) -> messages.RunResult:
        plan, settled = prepared.plan, prepared.settled
        run_id = plan.record.run_id if plan is not None else uuid.uuid4().hex
        job.run_id = run_id
        job.bridge.run_id = run_id  # its questions' states name the run
        conversation_id = continued.conversation_id if continued is not None else run_id
        if continued is None:
            self._book.forget_conversation()
        agents = self._agents_file(job)
        started = messages.RunStarted(
            runId=run_id,
            conversationId=conversation_id,
            goal=goal,
            followUp=continued is not None,
            agentsFile=None if agents is None else messages.AgentsFileRecord(**agents.to_dict()),
            resumed=True if plan is not None else None,
            steer=steer if plan is not None else None,
        )
        self._book.began(started)
        self._channel.notify(*notice(started))
        self._run_state(run_id, "running", None)
        job.on_stop = lambda: self._run_state(run_id, "stopping", None)
        job.on_pause = lambda: self._run_state(run_id, "pausing", None)
        if job.stopping:
            job.on_stop()
        try:
            end = self._runner.run(
                RunRequest(
                    job,
                    goal,
                    run_id,
                    continued,
                    plan,
                    settled,
                    agents,
                    steer,
                    model_named(self._state.sent_settings, job.settings),
                )
            )
        except Exception:
            self._run_state(run_id, "ended", "internal_error")
            raise
        result = replace(
            end.result,
            runId=run_id,
            conversationId=conversation_id,
            followUp=started.followUp,
            resumed=started.resumed,
        )
        self._book.ended(result, end.conversation)
        state: messages.RunStateName = "ended"
        if result.reason == "cancelled":
            state = "cancelled"
        elif result.reason in ("paused", "interrupted"):
            state = "paused"
        self._run_state(run_id, state, result.reason)
        return result

    def _run_state(self, run_id: str, state: messages.RunStateName, reason: str | None) -> None:
        self._channel.notify(
            *notice(messages.RunStateNotice(runId=run_id, state=state, reason=reason))
        )

    def _agents_file(self, job: Job) -> AgentsFile | None:
        """The root's AGENTS.md for this run, read once under the gate's path rules (None when
        turned off, absent, or when the workspace cannot be opened; the run then says why)."""
        settings, root = job.settings, job.root
        if not settings.agents_file:
            return None
        try:
            policy = settings.policy(root)
            store = ReceiptStore(settings.receipt_log_path(root))  # its log is never read
        except (AgentError, OSError, ValueError):
            return None
        return read_agents_file(Workspace(policy, receipt_store=store), policy.root)

    def _validate(self, job: Job, argv: list[str]) -> messages.ValidationResult:
        return self._one_effect(
            job,
            f"validation {argv}",
            lambda workspace: workspace.execute_step(ToolAction("run_command", {"argv": argv})),
        )

    def _one_effect(
        self, job: Job, label: str, perform: Callable[[Workspace], StepResult]
    ) -> messages.ValidationResult:
        """One effect outside a run: its observation, its record and the receipt it left."""
        try:
            workspace, unsubscribe = open_workspace(self._channel, job)
        except WorkspaceUnavailable as error:
            step = refusal(error.message)
            return messages.ValidationResult(
                observation=step.observation, receipt=None, **step_fields(step)
            )
        try:
            step = perform(workspace)
            receipt = None
            if step.call_id is not None and step.receipt_id is not None:
                receipt = workspace.receipt_store.get(step.call_id)
        finally:
            unsubscribe()
        self._channel.log(f"{label}: {step.observation}")
        return messages.ValidationResult(
            observation=step.observation,
            receipt=None if receipt is None else receipt_message(receipt),
            **step_fields(step),
        )

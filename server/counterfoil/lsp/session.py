"""One operation at a time on the workspace: an agent run (new, a follow-up, or a resumed one)
or a validation command.

Each operation runs on its own worker thread with the settings it started with (a change
applies to the next one), a fresh Workspace and a ReceiptStore read afresh from the log, so
receipts other processes appended are part of the chain. Stop denies a pending approval and
stops the model inside its token loop; pause lets a running command finish. Every run keeps
its checkpoint on disk (see `agent_run`), and the last run's conversation is kept in memory,
so a follow-up continues it. The queries live in `session_queries`.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..actions import ToolAction
from ..context.agents_file import AgentsFile, read_agents_file
from ..errors import AgentError
from ..gate.workspace import Workspace
from ..receipt_evidence import utc_now
from ..receipts import ReceiptStore
from ..settings.table import Settings
from ..steps import StepResult
from . import messages
from .agent_run import EVENT_METHOD, AgentRunner, RunRequest
from .channel import ClientChannel
from .confirm_bridge import ConfirmBridge
from .jobs import (
    Job,
    NoConversation,
    NoWorkspaceRoot,
    SessionBusy,
    WorkspaceUnavailable,
    open_workspace,
)
from .messages import wire
from .model_download import ModelDownloads
from .model_host import ModelHost
from .protocol import failed_run, receipt_dict, step_dict
from .run_record import Conversation
from .session_queries import SessionQueries

RUN_STARTED_METHOD = messages.RunStarted.METHOD
RUN_STATE_METHOD = messages.RunStateNotice.METHOD

__all__ = [
    "EVENT_METHOD",
    "Job",
    "NoConversation",
    "NoWorkspaceRoot",
    "Session",
    "SessionBusy",
    "WorkspaceUnavailable",
]

logger = logging.getLogger(__name__)

Prepared = tuple[Any, list[Any]]  # a resume's checked plan and the intents settled first


class Session(SessionQueries):
    def __init__(self, channel: ClientChannel) -> None:
        self.channel = channel
        self.models = ModelHost(channel)
        self.downloads = ModelDownloads(channel)
        self.runner = AgentRunner(channel, self.models, self.downloads)
        self.settings = Settings()
        self.root: Path | None = None
        self._job: Job | None = None
        self._lock = threading.Lock()
        self._conversation: Conversation | None = None
        self._runs: list[dict[str, Any]] = []

    # What the queries read

    @property
    def running(self) -> bool:
        with self._lock:
            return self._job is not None and not self._job.result.done()

    def conversation_status(self) -> dict[str, Any] | None:
        return None if self._conversation is None else self._conversation.status()

    def runs(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(run) for run in self._runs]

    def model_status(self) -> dict[str, Any]:
        return {"modelState": self.models.state, **self.downloads.status(self.settings.model)}

    # Operations

    def run(self, goal: str) -> Job:
        """A new conversation: the kept one is forgotten."""
        return self._start(
            "run", lambda job, prepared: self._run(job, goal, None, prepared), self._settle
        )

    def follow_up(self, text: str) -> Job:
        """Continue the kept conversation with the person's next message."""
        with self._lock:
            conversation = self._conversation
        if conversation is None:
            raise NoConversation("no conversation to continue")
        return self._start(
            "run",
            lambda job, prepared: self._run(job, text, conversation, prepared),
            self._settle,
        )

    def resume(self, run_id: str, steer: str | None) -> Job:
        """Continue a run kept on disk (interrupted or paused), its checks made first: raises
        CheckpointRefused with one sentence when it cannot go on, and nothing runs."""
        from ..sessions.reopen import open_for_resume
        from ..sessions.store import SessionStore

        def prepare(settings: Settings, root: Path) -> Prepared:
            _, settled = self._settle(settings, root)
            sessions = SessionStore(settings.receipt_log_path(root))
            plan = open_for_resume(sessions, settings.policy(root).root, run_id)
            return plan, settled

        return self._start(
            "run", lambda job, prepared: self._run(job, "", None, prepared, steer), prepare
        )

    def _settle(self, settings: Settings, root: Path) -> Prepared:
        """Settle from the disk what an interrupted run left (an intent without a receipt),
        once, before any run of this root goes on; the person is told what was found."""
        from ..sessions.intents import settle_intents
        from ..sessions.store import SessionStore

        log = settings.receipt_log_path(root)
        sessions = SessionStore(log)
        if not sessions.folder.is_dir():
            return None, []
        try:
            settled = settle_intents(sessions, ReceiptStore(log))
        except (AgentError, OSError) as error:
            self.channel.log(f"could not settle an interrupted effect: {error}")
            return None, []
        for found in settled:
            self.channel.log(found.line)
            self.channel.show_message("info", f"Counterfoil {found.line}")
        return None, settled

    def pause(self) -> str | None:
        """Ask the running agent run to pause; its run id, or None when no run goes."""
        with self._lock:
            job = self._job
        if job is None or job.result.done() or job.kind != "run":
            return None
        job.pause()
        return job.run_id

    def run_validation(self, argv: list[str]) -> Job:
        return self._start("validation", lambda job, _: self._validate(job, argv))

    def revert(self, call_id: str) -> Job:
        """Undo a file effect from its receipt, asked like any effect (`counterfoil/confirm`)."""
        return self._start(
            "revert",
            lambda job, _: self._one_effect(
                job, f"revert {call_id}", lambda w: w.revert_step(call_id)
            ),
        )

    def select_branch(self, branch: str) -> Job:
        """Apply a forked run's branch, each change asked like any effect (`counterfoil/confirm`)."""
        from .branches import select_answer

        return self._start(
            "selectBranch",
            lambda job, _: select_answer(
                branch, lambda: open_workspace(self.channel, job), job.bridge
            ),
        )

    def cancel(self) -> None:
        with self._lock:
            job = self._job
        if job is not None:
            job.cancel()

    def interrupt(self) -> None:
        """The client is going away: the running operation's open approval is withdrawn (an
        answer that still comes is not acted on) and a run stays resumable. Called at once
        when the shutdown request arrives, before anything the client sends after it."""
        with self._lock:
            job = self._job
        if job is not None:
            job.interrupt()

    def close(self, timeout: float = 10.0) -> None:
        """Interrupt the running operation, end its command, and wait for it, so no effect is
        left half done; a run closed so stays resumable."""
        self.interrupt()
        self.downloads.close(timeout)
        with self._lock:
            job = self._job
        if job is None:
            return
        job.cancel()
        if job.thread is not None and job.thread is not threading.current_thread():
            job.thread.join(timeout)
            if job.thread.is_alive():
                logger.warning("the %s did not stop within %.0f s", job.kind, timeout)

    def _start(
        self,
        kind: str,
        work: Callable[[Job, Prepared | None], dict[str, Any]],
        prepare: Callable[[Settings, Path], Prepared] | None = None,
    ) -> Job:
        with self._lock:
            if self._job is not None and not self._job.result.done():
                raise SessionBusy(f"a {self._job.kind} is already in progress")
            root = self.root
            if root is None:
                raise NoWorkspaceRoot("no workspace folder is open")
            settings = self.settings
            prepared = None if prepare is None else prepare(settings, root)
            bridge = ConfirmBridge(self.channel, root, settings.confirm_timeout_seconds)
            job = Job(kind, bridge, settings, root)
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
        text: str,
        continued: Conversation | None,
        prepared: Prepared | None,
        steer: str | None = None,
    ) -> dict[str, Any]:
        plan, settled = prepared if prepared is not None else (None, [])
        run_id = plan.record.run_id if plan is not None else uuid.uuid4().hex
        goal = plan.record.checkpoint.task if plan is not None else text
        job.run_id = run_id
        follow_up = continued is not None
        conversation_id = continued.conversation_id if continued is not None else run_id
        if continued is None:
            with self._lock:
                self._conversation = None
        agents = self._agents_file(job)
        started = wire(
            messages.RunStarted(
                runId=run_id,
                conversationId=conversation_id,
                goal=goal,
                followUp=follow_up,
                agentsFile=None
                if agents is None
                else messages.AgentsFileRecord(**agents.to_dict()),
                resumed=True if plan is not None else None,
            )
        )
        entry = {**started, "startedAt": utc_now(), "endedAt": None, "reason": None}
        entry["verdict"] = None
        with self._lock:
            self._runs.append(entry)
        self.channel.notify(RUN_STARTED_METHOD, started)
        self._run_state(run_id, "running", None)
        job.on_stop = lambda: self._run_state(run_id, "stopping", None)
        job.on_pause = lambda: self._run_state(run_id, "pausing", None)
        if job.stopping:
            job.on_stop()
        try:
            end = self.runner.run(
                RunRequest(job, goal, run_id, continued, plan, settled, agents, steer)
            )
        except Exception:
            self._run_state(run_id, "ended", "internal_error")
            raise
        result = end.result
        result.update(runId=run_id, conversationId=conversation_id, followUp=follow_up)
        if plan is not None:
            result["resumed"] = True
        with self._lock:
            entry.update(endedAt=utc_now(), reason=result["reason"], verdict=result.get("verdict"))
            if end.conversation is not None:
                self._conversation = end.conversation
        reason = result["reason"]
        state: messages.RunStateName = "ended"
        if reason == "cancelled":
            state = "cancelled"
        elif reason in ("paused", "interrupted"):
            state = "paused"
        self._run_state(run_id, state, reason)
        return result

    def _run_state(self, run_id: str, state: messages.RunStateName, reason: str | None) -> None:
        notice = messages.RunStateNotice(runId=run_id, state=state, reason=reason)
        self.channel.notify(RUN_STATE_METHOD, wire(notice))

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

    def _validate(self, job: Job, argv: list[str]) -> dict[str, Any]:
        return self._one_effect(
            job,
            f"validation {argv}",
            lambda workspace: workspace.execute_step(ToolAction("run_command", {"argv": argv})),
        )

    def _one_effect(
        self,
        job: Job,
        label: str,
        perform: Callable[[Workspace], StepResult],
    ) -> dict[str, Any]:
        """One effect outside a run: its observation, its record and the receipt it left."""
        try:
            workspace, unsubscribe = open_workspace(self.channel, job)
        except WorkspaceUnavailable as error:
            step = StepResult(f"error: {error.message}", state="refused")
            return {"observation": step.observation, "receipt": None, **step_dict(step)}
        try:
            step = perform(workspace)
            receipt = None
            if step.call_id is not None and step.receipt_id is not None:
                receipt = workspace.receipt_store.get(step.call_id)
        finally:
            unsubscribe()
        self.channel.log(f"{label}: {step.observation}")
        return {
            "observation": step.observation,
            "receipt": None if receipt is None else receipt_dict(receipt),
            **step_dict(step),
        }

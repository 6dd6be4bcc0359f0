"""One operation at a time on the workspace: an agent run or a validation command.

Each operation runs on its own worker thread with the settings it started with (a change
applies to the next one), a fresh Workspace and a ReceiptStore read afresh from the log, so
receipts other processes appended are part of the chain. Cancelling denies a pending
approval and stops the model inside its token loop. The last run's conversation (messages
and files read) is kept, so a follow-up continues it.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ..actions import ToolAction
from ..agents_file import AgentsFile, read_agents_file
from ..context import Observation
from ..errors import AgentError
from ..loop import AgentEvent, run_agent
from ..models.download import DownloadCancelled
from ..models.errors import ModelLoadError
from ..models.usage import usage_line
from ..receipt_evidence import utc_now
from ..receipts import EffectReceipt, ReceiptStore, verify_receipt_log
from ..receipts.content import load_object_prefix
from ..receipts.logfile import make_log_folder
from ..receipts.verify import read_receipt_log
from ..settings import Settings
from ..steps import StepResult
from ..workspace import Workspace
from . import messages
from .channel import ClientChannel
from .confirm_bridge import ConfirmBridge
from .messages import wire
from .model_download import ModelDownloads
from .model_host import HostedGenerate, ModelHost, ModelLoadFailed
from .protected_note import protected_by
from .protocol import event_dict, failed_run, receipt_dict, run_result, step_dict, tool_table
from .run_record import Conversation

EVENT_METHOD = messages.AgentEvent.METHOD
RECEIPT_METHOD = "counterfoil/receipt"
RUN_STARTED_METHOD = messages.RunStarted.METHOD
RUN_STATE_METHOD = messages.RunStateNotice.METHOD
MODEL_TEXT_METHOD = messages.ModelText.METHOD
MAX_OBJECT_TEXT_BYTES = 1024 * 1024

logger = logging.getLogger(__name__)


class SessionBusy(RuntimeError):
    """Another run or validation is still in progress."""


class NoWorkspaceRoot(RuntimeError):
    """The client opened no folder, so there is nothing to work on."""


class NoConversation(RuntimeError):
    """A follow-up with no kept conversation to continue."""


class WorkspaceUnavailable(RuntimeError):
    """The root or the receipt log cannot be used; `reason` goes into the run result."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Job:
    """A running operation: the settings and root it started with, its result future, its stop
    flag, its approval bridge."""

    def __init__(self, kind: str, bridge: ConfirmBridge, settings: Settings, root: Path) -> None:
        self.kind = kind
        self.bridge = bridge
        self.settings = settings
        self.root = root
        self.result: Future[dict[str, Any]] = Future()
        self.thread: threading.Thread | None = None
        self.on_stop: Callable[[], None] | None = None  # told once, when a stop is first asked

    @property
    def stopping(self) -> bool:
        return self.bridge.stop.is_set()

    def cancel(self) -> None:
        first = not self.bridge.stop.is_set()
        self.bridge.cancel()
        if first and self.on_stop is not None:
            self.on_stop()


class Session:
    def __init__(self, channel: ClientChannel) -> None:
        self.channel = channel
        self.models = ModelHost(channel)
        self.downloads = ModelDownloads(channel)
        self.settings = Settings()
        self.root: Path | None = None
        self._job: Job | None = None
        self._lock = threading.Lock()
        self._conversation: Conversation | None = None
        self._runs: list[dict[str, Any]] = []

    # State the client may ask about

    @property
    def running(self) -> bool:
        with self._lock:
            return self._job is not None and not self._job.result.done()

    def receipt_log(self) -> Path | None:
        return None if self.root is None else self.settings.receipt_log_path(self.root)

    def status(self) -> dict[str, Any]:
        settings, root = self.settings, self.root
        enabled: frozenset[str] = frozenset()
        if root is not None:
            try:
                enabled = Workspace(settings.policy(root)).available_tools
            except ValueError:  # the root has gone; runs will say so
                enabled = frozenset()
        log = self.receipt_log()
        return {
            "root": None if root is None else str(root),
            "model": settings.model,
            "modelState": self.models.state,
            "allowWrites": settings.allow_writes,
            "allowedCommands": [list(argv) for argv in settings.allowed_commands],
            "availableTools": sorted(enabled),
            "tools": tool_table(enabled),
            "receiptLog": None if log is None else str(log),
            "running": self.running,
            "conversation": None if self._conversation is None else self._conversation.status(),
            **self.downloads.status(settings.model),
        }

    def receipts(self) -> dict[str, Any]:
        log = self.receipt_log()
        if log is None:
            return {
                "receipts": [],
                "logPath": None,
                "error": "no workspace folder is open",
                "runs": self.runs(),
            }
        receipts: list[dict[str, Any]] = []
        report = read_receipt_log(log, lambda receipt: receipts.append(receipt_dict(receipt)))
        return {
            "receipts": receipts,  # every line checked: those before the first bad one
            "logPath": str(log),
            "error": report.error,
            "runs": self.runs(),
        }

    def runs(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(run) for run in self._runs]

    def verify(self) -> dict[str, Any]:
        """The chain and, when it holds, the files (`drift` is None when they were not checked)."""
        log = self.receipt_log()
        if log is None:
            message = "no workspace folder is open"
            shown = messages.VerifyResult(
                ok=False,
                count=0,
                error=message,
                line=None,
                chainOk=False,
                chainError=message,
                drift=None,
            )
            return dict(wire(shown))
        report = verify_receipt_log(log, root=self.root)
        chain_ok = report.ok or bool(report.drift)
        verified = messages.VerifyResult(
            ok=report.ok,
            count=report.count,
            error=report.error,
            line=report.line,
            chainOk=chain_ok,
            chainError=None if chain_ok else report.error,
            drift=list(report.drift) if report.drift_checked else None,
        )
        return dict(wire(verified))

    def stored_object(self, digest: str) -> dict[str, Any]:
        """A content-store object as text, bounded; `digest` is already checked to be hex."""
        log = self.receipt_log()
        found = None
        if log is not None:
            try:
                found = load_object_prefix(log.parent, digest, MAX_OBJECT_TEXT_BYTES)
            except AgentError:
                found = None
        if found is None:
            missing = messages.ObjectResult(
                sha256=digest, found=False, text=None, bytes=0, truncated=False
            )
            return dict(wire(missing))
        shown, size = found
        stored = messages.ObjectResult(
            sha256=digest,
            found=True,
            text=shown.decode("utf-8", errors="replace"),
            bytes=size,
            truncated=len(shown) < size,
        )
        return dict(wire(stored))

    # Operations

    def run(self, goal: str) -> Job:
        """A new conversation: the kept one is forgotten."""
        return self._start("run", lambda job: self._run(job, goal, None))

    def follow_up(self, text: str) -> Job:
        """Continue the kept conversation with the person's next message."""
        with self._lock:
            conversation = self._conversation
        if conversation is None:
            raise NoConversation("no conversation to continue")
        return self._start("run", lambda job: self._run(job, text, conversation))

    def run_validation(self, argv: list[str]) -> Job:
        return self._start("validation", lambda job: self._validate(job, argv))

    def revert(self, call_id: str) -> Job:
        """Undo a file effect from its receipt, asked like any effect (`counterfoil/confirm`)."""
        return self._start(
            "revert",
            lambda job: self._one_effect(
                job, f"revert {call_id}", lambda w: w.revert_step(call_id)
            ),
        )

    def select_branch(self, branch: str) -> Job:
        """Apply a forked run's branch, each change asked like any effect (`counterfoil/confirm`)."""
        from .branches import select_answer

        return self._start(
            "selectBranch",
            lambda job: select_answer(branch, lambda: self._workspace(job), job.bridge),
        )

    def cancel(self) -> None:
        with self._lock:
            job = self._job
        if job is not None:
            job.cancel()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the running operation and wait for it, so no effect is left half done."""
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

    def _start(self, kind: str, work: Callable[[Job], dict[str, Any]]) -> Job:
        with self._lock:
            if self._job is not None and not self._job.result.done():
                raise SessionBusy(f"a {self._job.kind} is already in progress")
            root = self.root
            if root is None:
                raise NoWorkspaceRoot("no workspace folder is open")
            settings = self.settings
            bridge = ConfirmBridge(self.channel, root, settings.confirm_timeout_seconds)
            job = Job(kind, bridge, settings, root)
            self._job = job

        def body() -> None:
            try:
                outcome = work(job)
            except Exception as error:  # the client always gets an answer
                logger.exception("%s failed", kind)
                outcome = failed_run("internal_error", f"{type(error).__name__}: {error}")
            job.result.set_result(outcome)

        job.thread = threading.Thread(target=body, name=f"counterfoil-{kind}", daemon=True)
        job.thread.start()
        return job

    def _workspace(
        self,
        job: Job,
        *,
        run_id: str | None = None,
        read_digests: dict[str, str] | None = None,
    ) -> tuple[Workspace, Callable[[], None]]:
        """A Workspace for one operation whose receipts go to the client as they are recorded.

        When the root or the log cannot be used the person is told, and WorkspaceUnavailable
        carries the reason for the result.
        """

        def unavailable(reason: str, message: str) -> WorkspaceUnavailable:
            self.channel.show_message("error", f"Counterfoil: {message}")
            return WorkspaceUnavailable(reason, message)

        settings, root = job.settings, job.root
        try:
            policy = settings.policy(root)
        except ValueError as error:
            raise unavailable("workspace_error", str(error)) from None
        log = settings.receipt_log_path(root)
        try:
            make_log_folder(log)
            store = ReceiptStore(log)
            store.require_signer()
        except (AgentError, OSError) as error:
            message = f"could not open the receipt log {log}: {error}"
            raise unavailable("receipt_log_error", message) from None

        def on_receipt(receipt: EffectReceipt) -> None:
            self.channel.notify(RECEIPT_METHOD, receipt_dict(receipt))

        unsubscribe = store.subscribe(on_receipt)
        workspace = Workspace(
            policy,
            receipt_store=store,
            confirm_proposal=job.bridge,
            stop_commands=job.bridge.stop,
            approval_via="editor",
            run_id=run_id,
            read_digests=read_digests,
        )
        return workspace, unsubscribe

    def _run(self, job: Job, goal: str, continued: Conversation | None) -> dict[str, Any]:
        run_id = uuid.uuid4().hex
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
            )
        )
        entry = {
            **started,
            "startedAt": utc_now(),
            "endedAt": None,
            "reason": None,
            "verdict": None,
        }
        with self._lock:
            self._runs.append(entry)
        self.channel.notify(RUN_STARTED_METHOD, started)
        self._run_state(run_id, "running", None)
        job.on_stop = lambda: self._run_state(run_id, "stopping", None)
        if job.stopping:
            job.on_stop()
        try:
            result = self._run_agent(job, goal, continued, run_id, agents)
        except Exception:
            self._run_state(run_id, "ended", "internal_error")
            raise
        result.update(runId=run_id, conversationId=conversation_id, followUp=follow_up)
        with self._lock:
            entry.update(endedAt=utc_now(), reason=result["reason"], verdict=result.get("verdict"))
        reason = result["reason"]
        self._run_state(run_id, "cancelled" if reason == "cancelled" else "ended", reason)
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

    def _run_agent(
        self,
        job: Job,
        goal: str,
        continued: Conversation | None,
        run_id: str,
        agents: AgentsFile | None = None,
    ) -> dict[str, Any]:
        settings, root = job.settings, job.root
        try:
            workspace, unsubscribe = self._workspace(
                job,
                run_id=run_id,
                read_digests=None if continued is None else continued.read_digests,
            )
        except WorkspaceUnavailable as error:
            return failed_run(error.reason, error.message)
        token = self.channel.begin_progress("Counterfoil", goal[:80])

        def report(step: int, message: str) -> None:
            self.channel.report_progress(token, f"step {step}: {message}")

        def on_text(step: int, text: str, thinking: bool) -> None:
            shown = messages.ModelText(runId=run_id, step=step, text=text, thinking=thinking)
            self.channel.notify(MODEL_TEXT_METHOD, wire(shown))

        def on_event(event: AgentEvent) -> None:
            shown = event_dict(
                event,
                run_id,
                generate.last_note or None,
                protected_by(event, settings.protected_patterns),
            )
            self.channel.notify(EVENT_METHOD, shown)
            self.channel.log(f"step {event.step} response: {event.response}")
            self.channel.log(f"step {event.step} action: {json.dumps(shown['action'])}")
            if event.result is not None:
                self.channel.log(f"step {event.step} observation: {event.result}")

        try:
            if job.stopping:
                return failed_run("cancelled", None)
            try:
                if not settings.endpoint:
                    self.downloads.ensure_on_disk(settings.model, lambda: job.stopping)
            except DownloadCancelled:
                return failed_run("cancelled", None)
            except ModelLoadError as error:
                self.channel.show_message("error", f"Counterfoil: {error}")
                return failed_run("model_error", str(error))
            try:
                loaded = self.models.load(settings, root)
            except ModelLoadFailed as error:
                self.channel.show_message("error", str(error))
                return failed_run("model_error", str(error))
            generate = HostedGenerate(
                self.models, loaded, report, should_stop=lambda: job.stopping, on_text=on_text
            )
            self.channel.log(f"run started: {goal}")
            history = [] if continued is None else continued.messages
            observations = [] if continued is None else continued.observations
            counted = len(generate.stats)  # the model is kept across runs
            run = run_agent(
                goal,
                generate,
                workspace,
                settings.limits(loaded),
                on_event,
                should_stop=lambda: job.stopping,
                messages=history,
                count_tokens=generate.count_tokens,
                observations=observations,
                instructions=None if agents is None else agents.text,
            )
            self._keep_conversation(continued, goal, history, observations, workspace, run_id)
            if run.reason == "model_error" and run.error:
                self.channel.show_message("error", f"model error: {run.error}")
            self.channel.log(f"run ended: {run.reason}; verdict: {run.verdict.summary()}")
            result = run_result(run)
            result["modelUsage"] = usage_line(generate.stats[counted:])
            return result
        finally:
            unsubscribe()
            self.channel.end_progress(token, "done")

    def _keep_conversation(
        self,
        continued: Conversation | None,
        goal: str,
        messages: list[dict[str, str]],
        observations: list[Observation],
        workspace: Workspace,
        run_id: str,
    ) -> None:
        conversation = continued or Conversation(run_id, goal, messages)
        conversation.messages = messages
        conversation.observations = observations  # so a follow-up elides earlier turns too
        conversation.read_digests = workspace.read_digests
        conversation.run_id = run_id
        conversation.turns += 1
        with self._lock:
            self._conversation = conversation

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
            workspace, unsubscribe = self._workspace(job)
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

"""One operation at a time on the workspace: an agent run or a validation command.

Each operation runs on its own worker thread with the settings it started with (a change
applies to the next one), a fresh Workspace and a ReceiptStore read afresh from the log, so
receipts other processes appended are part of the chain. Cancelling denies a pending
approval and stops the agent at its next step boundary.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..actions import ToolAction
from ..context import context_tokens
from ..errors import AgentError
from ..loop import AgentEvent, run_agent
from ..models.download import DownloadCancelled
from ..models.errors import ModelLoadError
from ..receipts import EffectReceipt, ReceiptStore, verify_receipt_log
from ..settings import Settings
from ..workspace import Workspace
from .channel import ClientChannel
from .confirm_bridge import ConfirmBridge
from .model_download import ModelDownloads
from .model_host import ModelHost, ModelLoadFailed
from .outcomes import effect_outcome
from .protocol import event_dict, failed_run, receipt_dict, run_result, tool_table

EVENT_METHOD = "counterfoil/event"
RECEIPT_METHOD = "counterfoil/receipt"

logger = logging.getLogger(__name__)


class SessionBusy(RuntimeError):
    """Another run or validation is still in progress."""


class NoWorkspaceRoot(RuntimeError):
    """The client opened no folder, so there is nothing to work on."""


class WorkspaceUnavailable(RuntimeError):
    """The root or the receipt log cannot be used; `reason` goes into the run result."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Job:
    """A running operation: its result future, its stop flag, its approval bridge."""

    def __init__(self, kind: str, bridge: ConfirmBridge) -> None:
        self.kind = kind
        self.bridge = bridge
        self.result: Future[dict[str, Any]] = Future()
        self.thread: threading.Thread | None = None

    @property
    def stopping(self) -> bool:
        return self.bridge.stop.is_set()

    def cancel(self) -> None:
        self.bridge.cancel()


class Session:
    def __init__(self, channel: ClientChannel) -> None:
        self.channel = channel
        self.models = ModelHost(channel)
        self.downloads = ModelDownloads(channel)
        self.settings = Settings()
        self.root: Path | None = None
        self._job: Job | None = None
        self._lock = threading.Lock()

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
            **self.downloads.status(settings.model),
        }

    def receipts(self) -> dict[str, Any]:
        log = self.receipt_log()
        if log is None:
            return {"receipts": [], "logPath": None, "error": "no workspace folder is open"}
        try:
            store = ReceiptStore(log)
        except AgentError as error:
            return {"receipts": [], "logPath": str(log), "error": str(error)}
        return {
            "receipts": [receipt_dict(r) for r in store.receipts()],
            "logPath": str(log),
            "error": None,
        }

    def verify(self) -> dict[str, Any]:
        log = self.receipt_log()
        if log is None:
            return {"ok": False, "count": 0, "error": "no workspace folder is open", "line": None}
        report = verify_receipt_log(log)
        return {"ok": report.ok, "count": report.count, "error": report.error, "line": report.line}

    # Operations

    def run(self, goal: str) -> Job:
        return self._start("run", lambda job, settings, root: self._run(job, settings, root, goal))

    def run_validation(self, argv: list[str]) -> Job:
        return self._start(
            "validation", lambda job, settings, root: self._validate(job, settings, root, argv)
        )

    def revert(self, call_id: str) -> Job:
        """Undo a file effect from its receipt, asked like any effect (`counterfoil/confirm`)."""
        return self._start(
            "revert",
            lambda job, settings, root: self._one_effect(
                job, settings, root, f"revert {call_id}", lambda w: w.revert(call_id)
            ),
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

    def _start(self, kind: str, work: Callable[[Job, Settings, Path], dict[str, Any]]) -> Job:
        with self._lock:
            if self._job is not None and not self._job.result.done():
                raise SessionBusy(f"a {self._job.kind} is already in progress")
            root = self.root
            if root is None:
                raise NoWorkspaceRoot("no workspace folder is open")
            settings = self.settings
            bridge = ConfirmBridge(self.channel, root, settings.confirm_timeout_seconds)
            job = Job(kind, bridge)
            self._job = job

        def body() -> None:
            try:
                outcome = work(job, settings, root)
            except Exception as error:  # the client always gets an answer
                logger.exception("%s failed", kind)
                outcome = failed_run("internal_error", f"{type(error).__name__}: {error}")
            job.result.set_result(outcome)

        job.thread = threading.Thread(target=body, name=f"counterfoil-{kind}", daemon=True)
        job.thread.start()
        return job

    def _workspace(
        self, job: Job, settings: Settings, root: Path, collected: list[EffectReceipt]
    ) -> tuple[Workspace, Callable[[], None]]:
        """A Workspace for one operation whose receipts go to `collected` and the client.

        When the root or the log cannot be used the person is told, and WorkspaceUnavailable
        carries the reason for the result.
        """

        def unavailable(reason: str, message: str) -> WorkspaceUnavailable:
            self.channel.show_message("error", f"Counterfoil: {message}")
            return WorkspaceUnavailable(reason, message)

        try:
            policy = settings.policy(root)
        except ValueError as error:
            raise unavailable("workspace_error", str(error)) from None
        log = settings.receipt_log_path(root)
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            store = ReceiptStore(log)
        except (AgentError, OSError) as error:
            message = f"could not open the receipt log {log}: {error}"
            raise unavailable("receipt_log_error", message) from None

        def on_receipt(receipt: EffectReceipt) -> None:
            collected.append(receipt)
            self.channel.notify(RECEIPT_METHOD, receipt_dict(receipt))

        unsubscribe = store.subscribe(on_receipt)
        workspace = Workspace(
            policy,
            receipt_store=store,
            confirm_proposal=job.bridge,
            stop_commands=job.bridge.stop,
            approval_via="editor",
        )
        return workspace, unsubscribe

    def _run(self, job: Job, settings: Settings, root: Path, goal: str) -> dict[str, Any]:
        try:
            workspace, unsubscribe = self._workspace(job, settings, root, [])
        except WorkspaceUnavailable as error:
            return failed_run(error.reason, error.message)
        token = self.channel.begin_progress("Counterfoil", goal[:80])

        def report(step: int, message: str) -> None:
            self.channel.report_progress(token, f"step {step}: {message}")

        def on_event(event: AgentEvent) -> None:
            self.channel.notify(EVENT_METHOD, event_dict(event))
            self.channel.log(f"step {event.step} response: {event.response}")
            shown = json.dumps(event_dict(event)["action"])
            self.channel.log(f"step {event.step} action: {shown}")
            if event.result is not None:
                self.channel.log(f"step {event.step} observation: {event.result}")

        try:
            if job.stopping:
                return failed_run("cancelled", None)
            try:
                if not getattr(settings, "endpoint", None):
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
            generate = self.models.wrap(loaded, report)
            self.channel.log(f"run started: {goal}")
            run = run_agent(
                goal,
                generate,
                workspace,
                replace(settings.limits(), max_context_tokens=context_tokens(loaded)),
                on_event,
                should_stop=lambda: job.stopping,
                count_tokens=getattr(loaded, "count_tokens", None),
            )
            if run.reason == "model_error" and run.error:
                self.channel.show_message("error", f"model error: {run.error}")
            self.channel.log(f"run ended: {run.reason}; verdict: {run.verdict.summary()}")
            return run_result(run)
        finally:
            unsubscribe()
            self.channel.end_progress(token, "done")

    def _validate(
        self, job: Job, settings: Settings, root: Path, argv: list[str]
    ) -> dict[str, Any]:
        return self._one_effect(
            job,
            settings,
            root,
            f"validation {argv}",
            lambda workspace: workspace.execute(ToolAction("run_command", {"argv": argv})),
        )

    def _one_effect(
        self,
        job: Job,
        settings: Settings,
        root: Path,
        label: str,
        perform: Callable[[Workspace], str],
    ) -> dict[str, Any]:
        """One effect outside a run: its observation and the receipt it left, if any."""
        collected: list[EffectReceipt] = []
        try:
            workspace, unsubscribe = self._workspace(job, settings, root, collected)
        except WorkspaceUnavailable as error:
            return {"observation": f"error: {error.message}", "receipt": None, "outcome": "refused"}
        try:
            observation = perform(workspace)
        except AgentError as error:
            observation = f"error: {error}"
        finally:
            unsubscribe()
        self.channel.log(f"{label}: {observation}")
        return {
            "observation": observation,
            "receipt": receipt_dict(collected[-1]) if collected else None,
            "outcome": effect_outcome(workspace.effect_outcomes, observation),
        }

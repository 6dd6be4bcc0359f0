"""One operation on the workspace, on its own worker thread: its settings, its stop and pause,
its approval bridge, and the workspace it works in.

Stop ends an operation at once (a pending approval is denied, a running command killed);
pause lets a running command finish and be receipted, withdraws a pending approval (it is asked
again on resume) and stops the run at its next complete observation. A client that goes away
(a reload, a shutdown, a lost connection) interrupts: the pending approval is withdrawn, not
denied, and the run stays resumable. Only Stop stops.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ...errors import AgentError
from ...gate.grants import FROM_SETTINGS, GrantedBy
from ...gate.policy import ToolPolicy
from ...gate.rules import RuleDecision
from ...gate.workspace import Workspace
from ...gate.workspace_setup import RuleApproved, WorkspaceSetup
from ...proposals import McpProposal, ToolProposal
from ...protocol import notice
from ...receipts import EffectReceipt, ReceiptStore
from ...receipts.logfile import make_log_folder
from ...settings.table import Settings
from ..approvals.confirm_bridge import ConfirmBridge
from ..approvals.confirm_messages import rule_approved
from ..channel import ClientChannel
from .run_messages import receipt_message


class SessionBusy(RuntimeError):
    """Another run or validation is still in progress."""


class NoWorkspaceRoot(RuntimeError):
    """The client opened no folder, so there is nothing to work on."""


class NoConversation(RuntimeError):
    """A follow-up with no kept conversation to continue."""


class ModelNotChosen(RuntimeError):
    """A setting that chooses the model was refused and left at its default: a run would use
    a model the person did not choose, so none starts; the message says which and why."""


class WorkspaceUnavailable(RuntimeError):
    """The root or the receipt log cannot be used; `reason` goes into the run result."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Job:
    """A running operation: the settings and root it started with, its result future, its stop
    and pause flags, its approval bridge."""

    def __init__(
        self,
        kind: str,
        bridge: ConfirmBridge,
        settings: Settings,
        root: Path,
        granted_by: GrantedBy = FROM_SETTINGS,
    ) -> None:
        self.kind = kind
        self.bridge = bridge
        self.settings = settings
        self.root = root
        self.granted_by = granted_by  # where its writes and commands were granted
        self.run_id: str | None = None  # set once a run has its id
        self.result: Future[Any] = Future()  # the request's result message
        self.thread: threading.Thread | None = None
        self.on_stop: Callable[[], None] | None = None  # told once, when a stop is first asked
        self.on_pause: Callable[[], None] | None = None  # told once, when a pause is first asked
        self.pause_asked = threading.Event()

    @property
    def closing(self) -> bool:
        """The client went away or the daemon is shutting down: the run stays resumable."""
        return self.bridge.lost.is_set()

    @property
    def stopping(self) -> bool:
        return self.bridge.stop.is_set()

    @property
    def pausing(self) -> bool:
        return self.pause_asked.is_set()

    @property
    def interrupted(self) -> bool:
        """Whether the run stops short and stays resumable (a pause, a shutdown)."""
        return self.pausing or self.closing

    def interrupt(self) -> None:
        """The client is going away: withdraw the open approval and stop at the next boundary,
        resumable."""
        self.bridge.interrupt()

    def cancel(self) -> None:
        first = not self.bridge.stop.is_set()
        self.bridge.cancel()
        if first and self.on_stop is not None:
            self.on_stop()

    def pause(self) -> None:
        first = not self.pause_asked.is_set()
        self.pause_asked.set()
        self.bridge.hold()
        if first and self.on_pause is not None:
            self.on_pause()


def open_workspace(
    channel: ClientChannel, job: Job, *, tell: bool = True
) -> tuple[Workspace, Callable[[], None]]:
    """A Workspace for one operation whose receipts go to the client as they are recorded
    (the second value unsubscribes); see `open_log` for when it cannot be opened."""
    policy, store, unsubscribe = open_log(channel, job, tell=tell)
    return Workspace(policy, receipt_store=store, setup=editor_setup(channel, job)), unsubscribe


def editor_setup(channel: ClientChannel, job: Job, run_id: str | None = None) -> WorkspaceSetup:
    """How the editor's workspace asks (the job's bridge, its stop ending a running command)
    and tells of each effect a rule approved."""
    return WorkspaceSetup(
        confirm_proposal=job.bridge,
        stop_commands=job.bridge.stop,
        approval_via="editor",
        run_id=run_id,
        on_rule_approved=rule_told(channel, job.root, run_id),
    )


def rule_told(channel: ClientChannel, root: Path, run_id: str | None) -> RuleApproved:
    """Tells the client of each effect a rule approved, as it is approved."""

    def on_rule_approved(proposal: ToolProposal | McpProposal, decided: RuleDecision) -> None:
        channel.notify(*notice(rule_approved(proposal, decided, root, run_id)))

    return on_rule_approved


def open_log(
    channel: ClientChannel, job: Job, *, tell: bool = True
) -> tuple[ToolPolicy, ReceiptStore, Callable[[], None]]:
    """The job's policy and receipt log, whose receipts go to the client as they are recorded
    (the third value unsubscribes). When the root or the log cannot be used
    WorkspaceUnavailable carries the reason for the result, and the person is told unless
    `tell` is False (a run's result says it, once)."""

    def unavailable(reason: str, message: str) -> WorkspaceUnavailable:
        if tell:
            channel.show_message("error", f"Counterfoil: {message}")
        return WorkspaceUnavailable(reason, message)

    settings, root = job.settings, job.root
    try:
        policy = settings.policy(root, job.granted_by)
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
        channel.notify(*notice(receipt_message(receipt)))

    return policy, store, store.subscribe(on_receipt)

"""Approval as a blocking question to the client, asked from the agent's worker thread: an
effect's (an edit, a command, an MCP call) and an MCP tool's definition before its first use.

Default No: an error the client answers, a timeout, Stop, or any answer but
`{"approved": true}` denies. The answer reaches the core as an `Approval`, with the person's
reason for a No or the text they approved instead of the proposal. A question that no longer
needs an answer is withdrawn with `$/cancelRequest`, so the editor can close its diff. A pause
withdraws the open question without stopping the run's command (`hold`); the call is asked
again when the run resumes.

A client that goes away (a reload, a closed window, a shutdown, a connection that closed, a
question that could not be sent or whose answer never can come) said nothing: its question is
withdrawn as interrupted, never taken as a No, and the run stops resumable (`lost`). Whatever
answer reaches the daemon after it learned the client is going is not acted on either: the
question is asked again when the run resumes.

Each change of a question's state (asked, withdrawn, interrupted, answered, denied) is told to
the editor as it happens (`counterfoil/approvalState`): the one state every surface shows.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pygls.exceptions import JsonRpcException

from ... import protocol as messages
from ...gate.approval import Approval
from ...mcp.toolbox import DefinitionQuestion
from ...proposals import McpProposal, ToolProposal
from ...protocol import notice, wire
from ..channel import ClientChannel
from .confirm_messages import approval_of, confirm_params
from .mcp_questions import definition_call_id, definition_params

CONFIRM_METHOD = messages.asked_as(messages.ConfirmParams)

logger = logging.getLogger(__name__)

WITHDRAWN_WHY = (
    "withdrawn for a pause before it was answered; nothing was done, "
    "and the run asks again when it goes on"
)
INTERRUPTED_WHY = (
    "the editor went away before it was answered; nothing was done, and Resume asks again"
)


class ConfirmBridge:
    """`Workspace(confirm_proposal=bridge)`: one pending question at a time per run."""

    def __init__(
        self,
        channel: ClientChannel,
        root: Path,
        timeout_seconds: float,
        *,
        stop: threading.Event | None = None,
    ) -> None:
        self._channel = channel
        self._root = root
        self._timeout = timeout_seconds
        self.stop = stop if stop is not None else threading.Event()
        self.held = threading.Event()
        self.lost = threading.Event()  # the client went away: every question is withdrawn
        self.withdrew = False  # a pause withdrew a question: it stays open in the checkpoint
        self.note: str | None = None  # said with the questions asked while it is set
        self.run_id: str | None = None  # the run whose questions these are, once known
        self._causes: dict[str, str] = {}
        self._waiting: set[threading.Event] = set()
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Deny the pending question (if any) and every later one."""
        self.stop.set()
        self._wake()

    def hold(self) -> None:
        """Withdraw the pending question (if any) and every later one, for a pause."""
        self.held.set()
        self._wake()

    def interrupt(self) -> None:
        """The client is going away: withdraw the pending question (if any) and every later
        one; an answer that still comes is not acted on."""
        self.lost.set()
        self._wake()

    def cause_of(self, call_id: str) -> str | None:
        """Why a No was not the person's typed answer: stale, closed, timed_out, stopped,
        paused, interrupted."""
        return self._causes.get(call_id)

    def _wake(self) -> None:
        with self._lock:
            for decided in self._waiting:
                decided.set()

    def _tell(self, call_id: str, state: messages.ApprovalStateName, why: str | None) -> None:
        told = messages.ApprovalState(runId=self.run_id, toolCallId=call_id, state=state, why=why)
        self._channel.notify(*notice(told))

    def _withdrawn(self, call_id: str, cause: str = "paused") -> Approval:
        self.withdrew = True
        self._causes[call_id] = cause
        if cause == "paused":
            self._tell(call_id, "withdrawn", WITHDRAWN_WHY)
        else:
            self._tell(call_id, "interrupted", INTERRUPTED_WHY)
        return Approval(False, withdrawn=True)

    def _gone(self, call_id: str, why: object) -> Approval:
        """The client cannot answer: withdrawn as interrupted, and the run stops resumable."""
        self.lost.set()
        self._channel.log(f"approval of {call_id} withdrawn: the editor went away ({why})")
        logger.info("confirm %s withdrawn: the client went away (%s)", call_id, why)
        return self._withdrawn(call_id, "interrupted")

    def __call__(self, proposal: ToolProposal | McpProposal) -> Approval:
        call_id = proposal.tool_call_id
        return self.ask(call_id, lambda: confirm_params(proposal, self._root, self.note))

    def definition(self, question: DefinitionQuestion) -> bool:
        """An MCP tool's definition, asked before the model is offered it: only a Yes offers
        it (a withdrawn question, like a No, leaves the tool out of this run)."""
        approval = self.ask(definition_call_id(question), lambda: definition_params(question))
        return approval.approved and not approval.withdrawn

    def ask(self, call_id: str, params_of: Callable[[], messages.ConfirmParams]) -> Approval:
        """Ask the client the question `params_of()` builds (only when it is asked at all)."""
        if self.lost.is_set():
            return self._withdrawn(call_id, "interrupted")
        if self.stop.is_set():
            self._causes[call_id] = "stopped"
            return Approval(False)
        if self.held.is_set():
            return self._withdrawn(call_id)
        params = wire(params_of())
        decided = threading.Event()
        with self._lock:
            self._waiting.add(decided)
        try:
            request_id, answer = self._channel.request(CONFIRM_METHOD, params)
            self._tell(call_id, "pending", params.get("note"))
            answer.add_done_callback(lambda _: decided.set())
            deadline = time.monotonic() + self._timeout
            while not decided.is_set() and not self._interrupted():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                decided.wait(remaining)
        except Exception as error:  # a question that could not be asked: nobody answered it
            logger.exception("confirm %s could not be asked", call_id)
            return self._gone(call_id, error)
        finally:
            with self._lock:
                self._waiting.discard(decided)
        if self.lost.is_set():
            if not answer.done():
                self._channel.cancel_request(request_id)
            self._channel.log(f"approval of {call_id} withdrawn: the editor is going away")
            return self._withdrawn(call_id, "interrupted")
        if self.stop.is_set() or not answer.done():
            why = "cancelled" if self.stop.is_set() else "timed out"
            if not answer.done():
                self._channel.cancel_request(request_id)
            if self.held.is_set() and not self.stop.is_set():
                self._channel.log(f"approval of {call_id} withdrawn for a pause")
                return self._withdrawn(call_id)
            self._causes[call_id] = "stopped" if self.stop.is_set() else "timed_out"
            self._tell(call_id, "denied", f"{why}: answered No without you")
            self._channel.log(f"approval of {call_id} {why}: denied")
            logger.info("confirm %s %s: denied", call_id, why)
            return Approval(False)
        if answer.cancelled():
            return self._gone(call_id, "its request was cancelled")
        failure = answer.exception()
        if failure is not None and not isinstance(failure, JsonRpcException):
            return self._gone(call_id, failure)  # the connection, not the client, failed
        if failure is not None:  # the client answered with an error: a No
            logger.info("confirm %s failed: denied (%s)", call_id, failure)
            self._tell(call_id, "denied", "the editor answered with an error: a No")
            return Approval(False)
        approval = approval_of(answer.result())
        self._tell(call_id, "answered", "approved" if approval.approved else "rejected")
        cause = answer.result().get("cause") if isinstance(answer.result(), dict) else None
        if not approval.approved and cause in ("stale", "closed"):
            self._causes[call_id] = cause
        logger.info(
            "confirm %s: %s%s",
            call_id,
            "approved" if approval.approved else "denied",
            " with edits" if approval.text is not None else "",
        )
        return approval

    def _interrupted(self) -> bool:
        return self.stop.is_set() or self.held.is_set() or self.lost.is_set()

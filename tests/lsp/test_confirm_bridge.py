"""The approval bridge in-process: what it makes of a question the connection could not carry,
as against an answer the client gave. (The stdio cases are in test_lost_client.py; a broken
pipe mid-request cannot be staged over a real one at will, so the channel here is a double.)"""

from __future__ import annotations

import hashlib
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcInternalError

from counterfoil.actions import ToolAction
from counterfoil.lsp.approvals.confirm_bridge import ConfirmBridge
from counterfoil.proposals import EditProposal


class OneAnswerChannel:
    """A ClientChannel whose one confirm request ends as `outcome` says."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.lines: list[str] = []
        self.told: list[tuple[str, Any]] = []

    def request(self, method: str, params: Any) -> tuple[str, Future[Any]]:
        answer: Future[Any] = Future()
        if self.outcome == "cancelled":
            answer.cancel()
        elif isinstance(self.outcome, BaseException):
            answer.set_exception(self.outcome)
        else:
            answer.set_result(self.outcome)
        return "counterfoil-1", answer

    def cancel_request(self, request_id: str) -> None:
        pass

    def notify(self, method: str, params: Any) -> None:
        self.told.append((method, params))

    def log(self, text: str) -> None:
        self.lines.append(text)


def proposal(root: Path) -> EditProposal:
    text = (root / "app.py").read_text(encoding="utf-8")
    new = text.replace("* 1", "* 2")

    def digest(value: str) -> str:
        return hashlib.sha256(value.encode()).hexdigest()

    action = ToolAction("edit_file", {"path": "app.py", "old": "* 1", "new": "* 2"})
    return EditProposal("call-1", action, "app.py", text, digest(text), new, digest(new))


def ask(root: Path, outcome: Any) -> tuple[ConfirmBridge, bool]:
    bridge = ConfirmBridge(OneAnswerChannel(outcome), root, 5.0)  # type: ignore[arg-type]
    return bridge, bridge(proposal(root)).approved


def test_a_question_the_connection_could_not_carry_is_withdrawn_as_interrupted(
    demo_project: Path,
) -> None:
    bridge, approved = ask(demo_project, ConnectionError("the client connection is closed"))

    assert approved is False
    assert bridge.cause_of("call-1") == "interrupted"
    assert bridge.lost.is_set() and bridge.withdrew


def test_a_cancelled_question_is_withdrawn_as_interrupted(demo_project: Path) -> None:
    bridge, approved = ask(demo_project, "cancelled")

    assert approved is False
    assert bridge.cause_of("call-1") == "interrupted" and bridge.lost.is_set()


def test_an_error_the_client_answers_is_a_no_and_the_run_goes_on(demo_project: Path) -> None:
    bridge, approved = ask(demo_project, JsonRpcInternalError(message="could not show it"))

    assert approved is False
    assert bridge.cause_of("call-1") is None and not bridge.lost.is_set()


def test_after_the_client_went_away_no_later_question_is_asked(demo_project: Path) -> None:
    bridge, _ = ask(demo_project, {"approved": True})
    bridge.interrupt()

    assert bridge(proposal(demo_project)).approved is False
    assert bridge.cause_of("call-1") == "interrupted"


def test_a_question_the_connection_could_not_carry_is_told_as_interrupted(
    demo_project: Path,
) -> None:
    channel = OneAnswerChannel(ConnectionError("the client connection is closed"))
    bridge = ConfirmBridge(channel, demo_project, 5.0)  # type: ignore[arg-type]
    bridge.run_id = "run-1"
    bridge(proposal(demo_project))

    told = [(method, params["runId"], params["state"]) for method, params in channel.told]
    assert told == [
        ("counterfoil/approvalState", "run-1", "pending"),
        ("counterfoil/approvalState", "run-1", "interrupted"),
    ]

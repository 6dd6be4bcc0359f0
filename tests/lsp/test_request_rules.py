"""The request table carries its rules: each request the daemon serves names, in its row of
`protocol.REQUESTS`, how it is served, and the daemon's table (`lsp/handlers.py`) names the one
method that does its work; a request marked one at a time is refused while another goes."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from counterfoil.lsp.handlers import handlers
from counterfoil.lsp.model_service.model_download import DownloadJob
from counterfoil.lsp.request_rules import SERVED_AS
from counterfoil.lsp.rpc_errors import RUN_IN_PROGRESS
from counterfoil.lsp.runs.jobs import Job
from counterfoil.lsp.session import Session
from counterfoil.protocol import REQUESTS, ConfirmParams, ConfirmResult, Request, Runs

from .conftest import RecordingChannel, StartDaemon, never_answer, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


REPOSITORY = Path(__file__).resolve().parents[2]
SERVED = {method: request for method, request in REQUESTS.items() if not request.to_client}
ONE_AT_A_TIME = {Runs.ONE_AT_A_TIME, Runs.ONE_AT_A_TIME_CHECKED_OFF_LOOP}
# What a handler returns under each rule: the result itself, or what the request waits for.
ANSWERED_WITH: dict[Runs, type | None] = {
    Runs.ON_LOOP: None,  # the declared result
    Runs.OFF_LOOP: None,
    Runs.ONE_AT_A_TIME: Job,
    Runs.ONE_AT_A_TIME_CHECKED_OFF_LOOP: Job,
    Runs.ONE_DOWNLOAD_AT_A_TIME: DownloadJob,
}


@pytest.fixture
def bound() -> dict[str, Any]:
    return handlers(Session(RecordingChannel()))  # type: ignore[arg-type]


def test_every_request_the_daemon_serves_has_exactly_one_handler(bound: dict[str, Any]) -> None:
    assert bound.keys() == SERVED.keys()
    assert len(set(bound.values())) == len(bound)  # no handler serves two methods


def test_every_request_the_daemon_serves_names_how_it_runs() -> None:
    assert all(isinstance(request.runs, Runs) for request in SERVED.values())
    assert all(request.runs is None for request in REQUESTS.values() if request.to_client)


def test_a_row_without_a_rule_is_refused_unless_the_client_answers_it() -> None:
    with pytest.raises(ValueError):
        Request(ConfirmParams, ConfirmResult)
    with pytest.raises(ValueError):
        Request(ConfirmParams, ConfirmResult, Runs.ON_LOOP, to_client=True)


def test_every_rule_has_one_way_to_be_served() -> None:
    assert SERVED_AS.keys() == set(Runs)
    assert ANSWERED_WITH.keys() == set(Runs)


def test_each_handler_takes_its_declared_params_and_answers_as_its_rule_says(
    bound: dict[str, Any],
) -> None:
    for method, request in SERVED.items():
        hints = typing.get_type_hints(bound[method])
        answered = hints.pop("return")
        assert list(hints.values()) == ([] if request.params is None else [request.params]), method
        assert request.runs is not None
        assert answered == (ANSWERED_WITH[request.runs] or request.result), method


def test_the_protocol_document_says_how_each_request_runs() -> None:
    document = (REPOSITORY / "docs" / "protocol.md").read_text(encoding="utf-8")
    said = dict(re.findall(r"^\| `(counterfoil/\w+)` \| `(\w+)` \|$", document, re.MULTILINE))
    assert said == {method: request.runs.name for method, request in SERVED.items() if request.runs}


# Params each one-at-a-time request is refused with; a new such request must be added here.
ASKED_WHILE_BUSY: dict[str, dict[str, Any]] = {
    "counterfoil/run": {"goal": "something else"},
    "counterfoil/followUp": {"text": "and then?"},
    "counterfoil/resume": {"runId": "0" * 32},
    "counterfoil/runValidation": {"argv": ["python", "validate.py"]},
    "counterfoil/revert": {"toolCallId": "call-1"},
    "counterfoil/selectBranch": {"branch": "nosuchrun.1"},
}


async def test_a_request_marked_one_at_a_time_is_refused_while_another_goes(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    marked = {method for method, request in SERVED.items() if request.runs in ONE_AT_A_TIME}
    assert marked == ASKED_WHILE_BUSY.keys()
    validate = ["python", "validate.py"]
    model = script(tmp_path / "final.jsonl", {"final": "ok"})
    daemon = await start_daemon({"model": model, "allowedCommands": [validate]})
    assert (await daemon.request("counterfoil/run", {"goal": "a conversation"}))["completed"]
    daemon.answer = never_answer  # the validation waits for its approval: it keeps going
    pending = daemon.send("counterfoil/runValidation", {"argv": validate}, msg_id="validation")
    await daemon.until(lambda: daemon.confirms)

    refused = {}
    for method, params in ASKED_WHILE_BUSY.items():
        with pytest.raises(JsonRpcException) as error:
            await daemon.request(method, params)
        refused[method] = error.value.code
    answered = await daemon.request("counterfoil/status", {})  # served on the loop meanwhile

    assert refused == dict.fromkeys(ASKED_WHILE_BUSY, RUN_IN_PROGRESS)
    assert answered["running"] is True
    daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="validation"))
    assert (await pending)["state"] == "rejected"

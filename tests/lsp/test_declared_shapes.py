"""Every message a layer sends is the declared one: every kind of receipt the log writes is a
declared `LoggedReceipt` (sent as a `Receipt`), and every request's result, built by the
handler the daemon binds and served as its row says, has its declared shape. (That each
handler takes and answers the messages `REQUESTS` names: tests/lsp/test_request_rules.py.)"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil import protocol as messages
from counterfoil.lsp.approvals.confirm_messages import confirm_params
from counterfoil.lsp.handlers import handlers
from counterfoil.lsp.model_service.model_download import DownloadJob, answer
from counterfoil.lsp.request_rules import answer as served_answer
from counterfoil.lsp.runs.run_messages import receipt_message
from counterfoil.lsp.session import Session
from counterfoil.proposals import ToolProposal
from counterfoil.protocol import REQUESTS, wire
from counterfoil.receipt_evidence import approval_record
from counterfoil.receipts import EffectReceipt
from counterfoil.receipts.verify import read_receipt_log
from counterfoil.sessions.intents import intent_of, settle_intents
from counterfoil.sessions.store import SessionStore
from counterfoil.settings.table import Settings

from .conftest import RecordingChannel, script
from .test_messages import conforms

LOG = ".counterfoil/receipts.jsonl"
SERVED = {method: request for method, request in REQUESTS.items() if not request.to_client}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n")
    (root / ".counterfoil").mkdir()
    return root


def workspace(root: Path) -> Workspace:
    return make_workspace(
        root,
        store=ReceiptStore(root / LOG, signer=None),
        answer=True,
        run_id="run-1",
        allow_writes=True,
        allowed_commands=(("true",),),
        create_parent_folders=True,
    )


def recovered_edit(root: Path) -> None:
    """An edit whose intent was written and whose effect landed, then settled from the disk."""
    gate = workspace(root)
    gate.read_file("app.py")
    action = ToolAction("edit_file", {"path": "app.py", "old": "2", "new": "3"})
    proposal: ToolProposal = gate.propose(action, "call-9")
    intent = intent_of(proposal, approval_record(proposal, "cli"), "run-1", gate.policy.root)
    SessionStore(root / LOG).write_intent("run-1", "call-9", intent)
    (root / "app.py").write_text("answer = 3\n")
    settle_intents(SessionStore(root / LOG), ReceiptStore(root / LOG, signer=None))


def test_every_kind_of_receipt_is_a_declared_receipt(project: Path) -> None:
    gate = workspace(project)
    gate.read_file("app.py")
    gate.execute(ToolAction("write_file", {"path": "src/pkg/mod.py", "content": "x = 1\n"}))
    gate.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}))
    gate.execute(ToolAction("run_command", {"argv": ["true"]}))
    gate.revert_step("call-1")
    recovered_edit(project)

    receipts: list[EffectReceipt] = []
    read_receipt_log(project / LOG, receipts.append)
    kinds = {key for receipt in receipts for key in receipt.to_dict()}
    assert {"created_folders", "removed_folders", "reverts", "recovered", "argv"} <= kinds
    for receipt in receipts:
        conforms(receipt.to_dict(), messages.LoggedReceipt, receipt.tool_call_id)
        conforms(wire(receipt_message(receipt)), messages.Receipt, receipt.tool_call_id)


def test_the_confirm_request_has_its_declared_params(project: Path) -> None:
    gate = workspace(project)
    gate.read_file("app.py")
    for action in (
        ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}),
        ToolAction("run_command", {"argv": ["true"]}),
    ):
        asked = confirm_params(gate.propose(action, f"call-{action.tool}"), project)
        conforms(wire(asked), messages.ConfirmParams, action.tool)


def built_results(root: Path) -> dict[str, list[Any]]:
    """Each served request answered by the handler the daemon binds, in process."""
    session = Session(RecordingChannel())  # type: ignore[arg-type]
    session.root = root
    read = {"tool": "read_file", "path": "app.py"}
    model = script(root.parent / "model.jsonl", read, {"final": "1"}, {"final": "still 1"})
    session.settings = Settings(model=model)
    bound = handlers(session)

    def ask(method: str, **params: Any) -> Any:
        request = REQUESTS[method]
        parsed = None if request.params is None else request.params(**params)
        return asyncio.run(served_answer(request, bound[method], parsed))

    ran = ask("counterfoil/run", goal="what is the answer?")
    assert ran.reason == "completed"
    assert ran.runId is not None
    finished = DownloadJob("owner/model")
    finished.result.set_result(root)
    return {
        "counterfoil/run": [ran],
        "counterfoil/followUp": [ask("counterfoil/followUp", text="and again?")],
        "counterfoil/resume": [],  # answered as a run is: RunResult, above
        "counterfoil/runValidation": [ask("counterfoil/runValidation", argv=["rm", "-rf", "."])],
        "counterfoil/revert": [ask("counterfoil/revert", toolCallId="call-404")],
        "counterfoil/receipts": [ask("counterfoil/receipts")],
        "counterfoil/verifyReceipts": [ask("counterfoil/verifyReceipts")],
        "counterfoil/exportEvidence": [ask("counterfoil/exportEvidence", commit="HEAD")],
        "counterfoil/status": [ask("counterfoil/status")],
        "counterfoil/object": [ask("counterfoil/object", sha256="0" * 64)],
        "counterfoil/modelRuntime": [ask("counterfoil/modelRuntime")],
        "counterfoil/downloadModel": [asyncio.run(answer(finished))],
        "counterfoil/sessions": [ask("counterfoil/sessions")],
        "counterfoil/inspect": [ask("counterfoil/inspect", runId=ran.runId)],
        "counterfoil/pause": [ask("counterfoil/pause")],
        # A discard needs an interrupted run: tests/lsp/test_sessions_discard.py answers one
        # through the daemon and checks it against DiscardResult.
        "counterfoil/discard": [],
        "counterfoil/branches": [ask("counterfoil/branches", runId=ran.runId)],
        "counterfoil/selectBranch": [ask("counterfoil/selectBranch", branch="nosuchrun.1")],
        "counterfoil/folderSettings": [ask("counterfoil/folderSettings")],
        "counterfoil/confirmFolderGrants": [
            ask("counterfoil/confirmFolderGrants", grants={"allowWrites": True}, origin="person")
        ],
    }


def test_every_result_has_its_declared_shape(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(project.parent / "config"))
    results = built_results(project)

    assert results.keys() == SERVED.keys()
    for method, built in results.items():
        for result in built:
            assert isinstance(result, SERVED[method].result), method
            conforms(wire(result), SERVED[method].result, method)


def test_a_step_without_an_action_says_why_in_its_own_field(project: Path) -> None:
    from counterfoil.loop import AgentEvent, run_agent
    from counterfoil.lsp.runs.run_messages import event_message

    events: list[AgentEvent] = []
    responses = iter(['{"tool":"write_file","path":"a","content":"b"}', '{"final":"no"}'])
    reader = make_workspace(project)  # no writes: write_file is not enabled
    run_agent("go", lambda _: next(responses), reader, on_event=events.append)

    shown = wire(event_message(events[0], "run-1"))
    assert shown["action"] is None
    assert shown["noAction"] == shown["result"].removeprefix("error: ")
    assert "noAction" not in wire(event_message(events[1], "run-1"))


def test_a_tool_not_enabled_is_named_in_its_own_field(project: Path) -> None:
    from counterfoil.loop import AgentEvent, run_agent
    from counterfoil.lsp.runs.run_messages import event_message

    events: list[AgentEvent] = []
    responses = iter(['{"tool":"write_file","path":"a","content":"b"}', '{"final":"no"}'])
    reader = make_workspace(project)  # no writes: write_file is not enabled
    run_agent("go", lambda _: next(responses), reader, on_event=events.append)
    reworded = replace(events[0], result="error: some other words")

    assert wire(event_message(reworded, "run-1"))["notEnabled"] == "write_file"
    assert "notEnabled" not in wire(event_message(events[1], "run-1"))


def test_a_refused_read_carries_the_gates_reason_apart_from_what_the_model_read(
    project: Path,
) -> None:
    from counterfoil.loop import AgentEvent
    from counterfoil.lsp.runs.run_messages import event_message

    action = ToolAction("read_file", {"path": "../outside.txt"})
    step = make_workspace(project).execute_step(action)
    event = AgentEvent(1, "", action, "error: some other words", step)

    shown = wire(event_message(event, "run-1"))
    assert (shown["state"], shown["reason"]) == ("refused", step.error)
    assert step.error and step.error in step.observation

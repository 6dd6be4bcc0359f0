"""Intent, effect, receipt: an approved effect is written down first, and an intent left
without a receipt is settled from the disk, once, and never done again."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, Workspace
from counterfoil.cli.receipts import receipts_command
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.proposals import ToolProposal
from counterfoil.receipt_evidence import approval_record
from counterfoil.receipt_fields import ApprovalRecord
from counterfoil.sessions.intents import intent_of, objects_in_use, settle_intents
from counterfoil.sessions.store import SessionStore

RUN = "run-1"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("answer = 1\n")
    (tmp_path / ".counterfoil").mkdir()
    return tmp_path


def workspace(root: Path, setup: WorkspaceSetup | None = None, **policy: object) -> Workspace:
    log = root / ".counterfoil" / "receipts.jsonl"
    return make_workspace(
        root,
        store=ReceiptStore(log, signer=None),
        answer=True,
        run_id=RUN,
        allow_writes=True,
        setup=setup,
        **policy,  # type: ignore[arg-type]
    )


def left_open(root: Path, action: ToolAction, call_id: str = "call-1") -> ToolProposal:
    """The intent of `action` written, as by a run killed before its effect's receipt."""
    gate = workspace(root, allowed_commands=(("true",),))
    gate.read_file("app.py")
    proposal = gate.propose(action, call_id)
    intent = intent_of(proposal, approval_record(proposal, "cli"), RUN, gate.policy.root)
    SessionStore(gate.receipt_store.path).write_intent(RUN, call_id, intent)  # type: ignore[arg-type]
    return proposal


def settle(root: Path) -> list[str]:
    store = ReceiptStore(root / ".counterfoil" / "receipts.jsonl", signer=None)
    return [found.outcome for found in settle_intents(SessionStore(store.path), store)]  # type: ignore[arg-type]


EDIT = ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"})


def test_the_intent_is_written_before_the_effect_and_can_stop_it(project: Path) -> None:
    seen: list[str] = []

    def refuse(proposal: ToolProposal, approval: ApprovalRecord) -> None:
        seen.append((project / "app.py").read_text())
        raise OSError(28, "No space left on device")

    gate = workspace(project, WorkspaceSetup(before_effect=refuse))
    gate.read_file("app.py")
    result = gate.execute(EDIT)

    assert seen == ["answer = 1\n"]
    assert result == "error: No space left on device"
    assert (project / "app.py").read_text() == "answer = 1\n"
    assert len(gate.receipt_store) == 0


def test_an_edit_on_disk_is_recorded_as_recovered_with_its_approval(project: Path) -> None:
    proposal = left_open(project, EDIT)
    (project / "app.py").write_text("answer = 2\n")

    assert settle(project) == ["performed"]
    receipt = ReceiptStore(project / ".counterfoil" / "receipts.jsonl", signer=None).get("call-1")
    assert receipt is not None
    assert (receipt.result, receipt.changed_artifacts) == ("edited app.py", ("app.py",))
    assert receipt.evidence.recovered == "performed"
    assert receipt.evidence.approval.shown_sha256 == proposal.proposed_sha256  # type: ignore[union-attr]
    assert receipt.evidence.result_sha256 == proposal.proposed_sha256  # type: ignore[union-attr]


def test_an_edit_not_on_disk_is_recorded_as_not_performed_without_a_receipt(
    project: Path,
) -> None:
    left_open(project, EDIT)

    assert settle(project) == ["not_performed"]
    assert len(ReceiptStore(project / ".counterfoil" / "receipts.jsonl", signer=None)) == 0
    assert (project / "app.py").read_text() == "answer = 1\n"


def test_a_file_holding_other_bytes_is_unknown_and_left_alone(project: Path) -> None:
    left_open(project, EDIT)
    (project / "app.py").write_text("answer = 3\n")

    assert settle(project) == ["unknown"]
    assert (project / "app.py").read_text() == "answer = 3\n"


def test_a_command_without_its_end_is_recorded_as_interrupted(project: Path) -> None:
    left_open(project, ToolAction("run_command", {"argv": ["true"]}))

    assert settle(project) == ["interrupted"]
    receipt = ReceiptStore(project / ".counterfoil" / "receipts.jsonl", signer=None).get("call-1")
    assert receipt is not None and receipt.exit_state == "error"
    assert receipt.evidence.recovered == "interrupted"


def test_an_intent_is_settled_once(project: Path) -> None:
    left_open(project, EDIT)

    assert settle(project) == ["not_performed"]
    assert settle(project) == []


def test_a_live_runs_intents_are_left_to_it(project: Path) -> None:
    left_open(project, EDIT)
    (project / "app.py").write_text("answer = 2\n")

    with SessionStore(project / ".counterfoil" / "receipts.jsonl").lock(RUN):
        assert settle(project) == []


def test_receipts_gc_keeps_the_bytes_an_open_intent_names(project: Path) -> None:
    proposal = left_open(project, EDIT)
    log = project / ".counterfoil" / "receipts.jsonl"
    store = ReceiptStore(log, signer=None)
    store.keep_object(b"answer = 2\n")
    store.keep_object(b"unnamed\n")
    del store  # its hold on what it wrote goes with it, as when its process ends
    log.touch()
    out = io.StringIO()

    assert receipts_command(_namespace("gc", log), out) == 0, out.getvalue()

    kept = {path.name for path in (project / ".counterfoil" / "objects").iterdir()}
    assert kept == {proposal.proposed_sha256}  # type: ignore[union-attr]
    assert proposal.proposed_sha256 in objects_in_use(log.parent)  # type: ignore[union-attr]


def test_receipts_verify_reports_an_open_intent_without_recording_it(project: Path) -> None:
    left_open(project, EDIT)
    (project / "app.py").write_text("answer = 2\n")
    log = project / ".counterfoil" / "receipts.jsonl"
    log.touch()
    out = io.StringIO()

    receipts_command(_namespace("verify", log), out)

    assert (
        f"open intent: call-1 (edit_file app.py, run {RUN}) has no receipt; the disk says "
        "performed; the next run or resume records it\n"
    ) in out.getvalue()
    assert len(ReceiptStore(log, signer=None)) == 0


def _namespace(command: str, log: Path) -> object:
    import argparse

    return argparse.Namespace(receipts_command=command, path=log, public_key=None, root=None)


def test_the_agent_can_neither_see_nor_touch_the_sessions(project: Path) -> None:
    left_open(project, EDIT)
    gate = workspace(project)
    checkpoint = f".counterfoil/sessions/{RUN}/intents/call-1.json"

    assert "sessions" not in gate.execute(ToolAction("list_files", {"path": ".counterfoil"}))
    assert gate.execute(ToolAction("read_file", {"path": checkpoint})) == (
        "error: path is not accessible"
    )
    written = gate.execute(
        ToolAction("write_file", {"path": f".counterfoil/sessions/{RUN}/x.json", "content": ""})
    )
    assert written == "error: path is not accessible"
    found = gate.execute(ToolAction("search_files", {"pattern": "call-1", "path": "."}))
    assert "sessions" not in found

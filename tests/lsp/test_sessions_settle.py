"""An effect a killed run approved but never receipted is settled from the disk before the
daemon's next run goes on, once, and the person is told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction
from counterfoil.receipt_evidence import approval_record
from counterfoil.sessions.intents import intent_of
from counterfoil.sessions.store import SessionStore

from .conftest import StartDaemon, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


EDIT = ToolAction("edit_file", {"path": "app.py", "old": "* 1", "new": "* 2"})


def killed_after_its_write(root: Path) -> None:
    """What a run killed between its write and its receipt leaves: the intent, the new bytes."""
    log = root.resolve() / ".counterfoil" / "receipts.jsonl"
    log.parent.mkdir(exist_ok=True)
    gate = make_workspace(
        root.resolve(),
        store=ReceiptStore(log, signer=None),
        answer=True,
        run_id="killed-run",
        allow_writes=True,
    )
    gate.read_file("app.py")
    proposal = gate.propose(EDIT, "call-1")
    intent = intent_of(
        proposal, approval_record(proposal, "editor"), "killed-run", gate.policy.root
    )
    SessionStore(log).write_intent("killed-run", "call-1", intent)
    (root / "app.py").write_text((root / "app.py").read_text().replace("* 1", "* 2"))


async def test_the_next_run_settles_an_effect_left_without_a_receipt(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    killed_after_its_write(demo_project)
    daemon = await start_daemon({"model": script(tmp_path / "m.jsonl", {"final": "ok"})})

    await daemon.request("counterfoil/run", {"goal": "anything"})
    await daemon.request("counterfoil/run", {"goal": "again"})

    log = demo_project / ".counterfoil" / "receipts.jsonl"
    receipts = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["tool_call_id"], r["run_id"]) for r in receipts] == [("call-1", "killed-run")]
    assert receipts[0]["recovered"] == "performed"
    assert any("Counterfoil recovered:" in shown.message for shown in daemon.client.messages)


async def test_a_foreign_intent_is_reported_in_the_terminals_sentence_and_never_receipted(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    shipped = demo_project / ".counterfoil" / "sessions" / "x" / "intents" / "call-1.json"
    shipped.parent.mkdir(parents=True)
    shipped.write_text(json.dumps({"call_id": "call-1", "run_id": "x", "kind": "command"}))
    daemon = await start_daemon({"model": script(tmp_path / "m.jsonl", {"final": "ok"})})

    await daemon.request("counterfoil/run", {"goal": "anything"})

    sentence = (
        "ignored: intent call-1.json of run x was not written by this installation; "
        "ignored, nothing recorded"
    )
    assert f"Counterfoil {sentence}" in [shown.message for shown in daemon.client.messages]
    log = demo_project / ".counterfoil" / "receipts.jsonl"
    assert not log.exists() or "call-1" not in log.read_text()

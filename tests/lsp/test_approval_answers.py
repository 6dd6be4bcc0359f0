"""What the person answers beyond yes and no: a reason, or the text they approved instead."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from .conftest import StartDaemon, edit_app_model, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def answering(answer: dict[str, Any]) -> Any:
    async def answer_with(params: dict[str, Any]) -> dict[str, Any]:
        return answer

    return answer_with


async def test_a_reject_reason_reaches_the_model_cleaned(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon({"model": edit_app_model(tmp_path), "allowWrites": True})
    daemon.answer = answering(
        {"approved": False, "reason": "use a constant\n\x1b[31minstead" + "!" * 600}
    )
    before = (demo_project / "app.py").read_bytes()

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    event = daemon.steps(result)[1]
    assert event["result"].startswith(
        "error: operator denied the tool action: use a constant [31minstead!!!"
    )
    assert len(event["result"]) == len("error: operator denied the tool action: ") + 500
    assert event["result"].endswith("…")
    assert event["state"] == "rejected"
    assert event["reason"] == event["result"].removeprefix(
        "error: operator denied the tool action: "
    )
    assert event["toolCallId"] == daemon.confirms[0]["toolCallId"]
    assert (demo_project / "app.py").read_bytes() == before
    assert daemon.receipts == []


async def test_a_stale_answer_is_a_denial_with_its_reason(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    daemon = await start_daemon({"model": edit_app_model(tmp_path), "allowWrites": True})
    daemon.answer = answering({"approved": False, "reason": "stale: file changed on disk"})

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    event = daemon.steps(result)[1]
    assert event["result"] == "error: operator denied the tool action: stale: file changed on disk"
    assert (event["state"], event["reason"]) == ("rejected", "stale: file changed on disk")


async def test_an_approved_write_that_finds_the_file_changed_is_failed(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon({"model": edit_app_model(tmp_path), "allowWrites": True})
    target = demo_project / "app.py"

    async def change_then_approve(params: dict[str, Any]) -> dict[str, Any]:
        target.write_text(target.read_text() + "# mine\n")
        return {"approved": True}

    daemon.answer = change_then_approve
    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    event = daemon.steps(result)[1]
    assert event["result"] == "error: file changed since it was read"
    assert event["state"] == "failed"
    assert target.read_text().endswith("# mine\n")


async def test_an_edited_approval_writes_the_persons_text(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon({"model": edit_app_model(tmp_path), "allowWrites": True})
    target = demo_project / "app.py"
    base = target.read_bytes()
    mine = base.decode().replace("value * 1", "value + value") + "# checked\n"
    daemon.answer = answering({"approved": True, "text": mine})

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert target.read_bytes() == mine.encode()
    shown = daemon.confirms[0]["preview"]["proposedText"]
    (receipt,) = daemon.receipts
    assert receipt["approval"]["modified"] is True
    assert receipt["approval"]["shown_sha256"] == sha256(shown.encode())
    assert receipt["approval"]["approved_sha256"] == sha256(mine.encode())
    assert receipt["result_sha256"] == sha256(mine.encode())
    assert receipt["base_sha256"] == sha256(base)
    observation = daemon.steps(result)[1]["result"]
    assert observation.startswith(
        "edited app.py (the person changed your proposal before approving: the text was edited)"
    )
    assert "-    return value * 2\n+    return value + value" in observation
    assert daemon.steps(result)[1]["state"] == "approved"
    assert daemon.steps(result)[1]["resultSha256"] == sha256(mine.encode())
    for digest in (receipt["approval"]["shown_sha256"], receipt["result_sha256"]):
        stored = await daemon.request("counterfoil/object", {"sha256": digest})
        assert stored["found"] is True and sha256(stored["text"].encode()) == digest


async def test_dropping_one_hunk_of_two_writes_the_other_and_says_so(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    target = demo_project / "greeting.py"
    base = target.read_text()
    both = base.replace("The greeting", "The welcome").replace('"Hello"', '"Welcome"')
    model = script(
        tmp_path / "model.jsonl",
        {"tool": "read_file", "path": "greeting.py"},
        {"tool": "write_file", "path": "greeting.py", "content": both},
        {"final": "done"},
    )
    daemon = await start_daemon({"model": model, "allowWrites": True})
    kept = base.replace('"Hello"', '"Welcome"')
    daemon.answer = answering({"approved": True, "text": kept})

    result = await daemon.request("counterfoil/run", {"goal": "welcome people"})

    assert target.read_text() == kept
    observation = daemon.steps(result)[1]["result"]
    assert observation.startswith(
        "wrote greeting.py (the person changed your proposal before approving: 1 of 2 changes kept)"
    )
    assert '-"""The welcome the demo service shows its users."""' in observation
    assert daemon.receipts[0]["approval"]["modified"] is True


async def test_an_edited_text_over_the_size_limit_is_refused_unwritten(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon = await start_daemon(
        {"model": edit_app_model(tmp_path), "allowWrites": True, "maxWriteBytes": 1024}
    )
    before = (demo_project / "app.py").read_bytes()
    daemon.answer = answering({"approved": True, "text": "x" * 1025})

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert daemon.steps(result)[1]["result"] == "error: edited text exceeds 1024 bytes"
    assert daemon.steps(result)[1]["state"] == "refused"
    assert (demo_project / "app.py").read_bytes() == before
    assert daemon.receipts == []


async def test_an_edited_answer_to_a_command_runs_nothing(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    argv = ["python", "validate.py"]
    model = script(tmp_path / "model.jsonl", {"tool": "run_command", "argv": argv}, {"final": "x"})
    daemon = await start_daemon({"model": model, "allowedCommands": [argv]})
    daemon.answer = answering({"approved": True, "text": "rm -rf /"})

    result = await daemon.request("counterfoil/run", {"goal": "validate"})

    assert (
        daemon.steps(result)[0]["result"] == "error: an edited approval applies only to file edits"
    )
    assert daemon.receipts == []

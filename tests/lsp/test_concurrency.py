"""One run at a time, cancellation at a pending approval, shutdown in the middle of a run."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from counterfoil.lsp.rpc_errors import RUN_IN_PROGRESS

from .conftest import Daemon, StartDaemon, edit_app_model, never_answer, script


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


async def _edit_pending_approval(
    start_daemon: StartDaemon, tmp_path: Path, run_id: str
) -> tuple[Daemon, object]:
    model = edit_app_model(tmp_path, "should not be reached when cancelled")
    daemon = await start_daemon({"model": model, "allowWrites": True})
    daemon.answer = never_answer
    pending = daemon.send("counterfoil/run", {"goal": "fix app.py"}, msg_id=run_id)
    await daemon.until(lambda: daemon.confirms)
    return daemon, pending


async def test_cancel_during_a_pending_approval_denies_it_and_ends_the_run(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    before = (demo_project / "app.py").read_bytes()
    daemon, pending = await _edit_pending_approval(start_daemon, tmp_path, "run-1")

    daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-1"))
    result = await pending

    assert result["completed"] is False
    assert result["reason"] == "cancelled"
    assert daemon.steps(result)[-1]["result"] == "error: operator denied the tool action"
    assert (demo_project / "app.py").read_bytes() == before
    await daemon.until(lambda: daemon.withdrawn == ["call-1"])
    assert daemon.receipts == []
    status = await daemon.request("counterfoil/status", {})
    assert status["running"] is False


async def test_a_second_run_is_refused_while_one_is_in_progress(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    daemon, pending = await _edit_pending_approval(start_daemon, tmp_path, "run-1")
    assert (await daemon.request("counterfoil/status", {}))["running"] is True

    with pytest.raises(JsonRpcException) as refused:
        await daemon.request("counterfoil/run", {"goal": "something else"})
    assert refused.value.code == RUN_IN_PROGRESS
    with pytest.raises(JsonRpcException) as refused_validation:
        await daemon.request("counterfoil/runValidation", {"argv": ["python", "validate.py"]})
    assert refused_validation.value.code == RUN_IN_PROGRESS

    daemon.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-1"))
    assert (await pending)["reason"] == "cancelled"
    model = script(tmp_path / "final.jsonl", {"final": "nothing to do"})
    await daemon.configure({"model": model})
    after = await daemon.request("counterfoil/run", {"goal": "now it may run"})
    assert after["reason"] == "completed"


async def test_shutdown_during_a_run_stops_it_without_touching_the_file(
    start_daemon_over_stdio: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    before = (demo_project / "app.py").read_bytes()
    daemon, pending = await _edit_pending_approval(start_daemon_over_stdio, tmp_path, "run-1")

    await daemon.client.shutdown_session()
    daemon.exited = True

    result = await pending
    assert result["reason"] == "interrupted"  # it stays resumable
    assert daemon.client._server is not None
    assert daemon.client._server.returncode == 0
    assert (demo_project / "app.py").read_bytes() == before
    assert sorted(p.name for p in demo_project.iterdir() if p.name.startswith(".")) == [
        ".counterfoil"
    ]
    assert list(demo_project.glob("*.tmp*")) == []


async def test_an_unanswered_confirm_times_out_as_a_no_and_is_withdrawn(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    before = (demo_project / "app.py").read_bytes()
    model = edit_app_model(tmp_path, "not approved in time")
    daemon = await start_daemon({"model": model, "allowWrites": True, "confirmTimeoutSeconds": 0.5})
    daemon.answer = never_answer

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert result["reason"] == "completed"
    assert daemon.steps(result)[1]["result"] == "error: operator denied the tool action"
    await daemon.until(lambda: daemon.withdrawn == ["call-1"])
    assert (demo_project / "app.py").read_bytes() == before

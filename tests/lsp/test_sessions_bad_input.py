"""Bad input to the sessions requests: a JSON-RPC error with one sentence, nothing runs, and
the daemon stays up."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from counterfoil.lsp.rpc_errors import RUN_REFUSED

from .conftest import Daemon, StartDaemon, edit_app_model


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


SESSIONS = Path(".counterfoil") / "sessions"


async def ended_run(start_daemon: StartDaemon, tmp_path: Path) -> tuple[str, Daemon]:
    daemon = await start_daemon({"model": edit_app_model(tmp_path), "allowWrites": True})
    result = await daemon.request("counterfoil/run", {"goal": "fix it"})
    return result["runId"], daemon


async def test_an_unknown_run_id_is_refused_with_a_sentence(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon()

    for method in ("counterfoil/resume", "counterfoil/inspect"):
        with pytest.raises(JsonRpcException) as refused:
            await daemon.request(method, {"runId": "no-such-run"})
        assert refused.value.code == RUN_REFUSED
        assert refused.value.message == f"there is no run no-such-run in {demo_project.resolve()}"
    assert (await daemon.request("counterfoil/status", {}))["running"] is False


async def test_a_run_id_that_is_not_one_is_refused(start_daemon: StartDaemon) -> None:
    daemon = await start_daemon()

    with pytest.raises(JsonRpcException) as refused:
        await daemon.request("counterfoil/resume", {"runId": "../../etc"})

    assert refused.value.message == "'../../etc' is not a run id"


async def test_malformed_params_are_invalid(start_daemon: StartDaemon) -> None:
    daemon = await start_daemon()

    for method, params in [
        ("counterfoil/resume", {}),
        ("counterfoil/resume", {"runId": 7}),
        ("counterfoil/resume", {"runId": "abc", "steer": "  "}),
        ("counterfoil/resume", {"runId": "abc", "steer": ["x"]}),
        ("counterfoil/inspect", {"runId": ""}),
        ("counterfoil/sessions", "please"),
        ("counterfoil/pause", 3),
    ]:
        with pytest.raises(JsonRpcInvalidParams):
            await daemon.request(method, params)


async def test_an_ended_run_is_not_resumed(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    run_id, daemon = await ended_run(start_daemon, tmp_path)

    with pytest.raises(JsonRpcException) as refused:
        await daemon.request("counterfoil/resume", {"runId": run_id})

    assert refused.value.message == f"run {run_id} ended (completed); there is nothing to resume"


async def test_a_corrupt_checkpoint_is_refused_and_listed_with_its_problem(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    run_id, daemon = await ended_run(start_daemon, tmp_path)
    checkpoint = demo_project / SESSIONS / run_id / "checkpoint.json"
    checkpoint.write_bytes(checkpoint.read_bytes()[:100])

    with pytest.raises(JsonRpcException) as refused:
        await daemon.request("counterfoil/resume", {"runId": run_id})
    listed = await daemon.request("counterfoil/sessions", {})

    sentence = f"the checkpoint of run {run_id} is not readable (truncated or corrupt)"
    assert refused.value.message == sentence
    (session,) = listed["sessions"]
    assert session["state"] == "unreadable" and session["problem"] == sentence
    assert (await daemon.request("counterfoil/status", {}))["running"] is False

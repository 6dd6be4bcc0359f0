"""A client that goes away (a reload, a closed window, a shutdown) said nothing: the approval it
was showing is withdrawn as interrupted, never recorded as rejected or stopped, and the run
stays resumable. Only Stop stops."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from .conftest import StartDaemon, edit_app_model


def run_record(root: Path) -> list[dict[str, Any]]:
    """The only run's own record (`decisions.jsonl`), one entry a line."""
    (folder,) = [path for path in (root / ".counterfoil" / "sessions").iterdir() if path.is_dir()]
    lines = (folder / "decisions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


async def test_a_no_sent_after_shutdown_is_not_acted_on_and_the_run_stays_resumable(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    settings = {"model": edit_app_model(tmp_path), "allowWrites": True}
    daemon = await start_daemon(settings)
    release = asyncio.Event()

    async def no_once_released(params: dict[str, Any]) -> Any:
        await release.wait()
        return {"approved": False}

    daemon.answer = no_once_released
    running = daemon.send("counterfoil/run", {"goal": "fix app.py"})
    await daemon.until(lambda: len(daemon.confirms) == 1)

    shutting = daemon.send("shutdown")  # on the wire before the No, as a reload sends them
    await asyncio.sleep(0)
    release.set()
    await shutting
    daemon.client.exit(None)
    assert daemon.client._server is not None
    await asyncio.wait_for(daemon.client._server.wait(), 15)
    daemon.exited = True
    running.cancel()

    decisions = [entry for entry in run_record(demo_project) if entry["kind"] == "decision"]
    assert [(entry["call_id"], entry["state"]) for entry in decisions] == [
        ("call-1", "interrupted")
    ]
    assert run_record(demo_project)[-1]["kind"] == "paused"
    fresh = await start_daemon(settings)
    (session,) = (await fresh.request("counterfoil/sessions", {}))["sessions"]
    assert session["state"] == "interrupted"
    assert session["pending"]["toolCallId"] == "call-1"


async def test_a_client_whose_connection_closes_leaves_its_waiting_call_interrupted(
    start_daemon: StartDaemon, demo_project: Path, tmp_path: Path
) -> None:
    settings = {"model": edit_app_model(tmp_path), "allowWrites": True}
    daemon = await start_daemon(settings)
    daemon.answer = lambda params: asyncio.Event().wait()
    daemon.send("counterfoil/run", {"goal": "fix app.py"})
    await daemon.until(lambda: len(daemon.confirms) == 1)
    process = daemon.client._server
    assert process is not None and process.stdin is not None

    process.stdin.close()  # the editor's end of the pipe is gone, with no shutdown
    await asyncio.wait_for(process.wait(), 15)
    daemon.exited = True

    decisions = [entry for entry in run_record(demo_project) if entry["kind"] == "decision"]
    assert [(entry["call_id"], entry["state"]) for entry in decisions] == [
        ("call-1", "interrupted")
    ]
    fresh = await start_daemon(settings)
    (session,) = (await fresh.request("counterfoil/sessions", {}))["sessions"]
    assert (session["state"], session["pending"]["toolCallId"]) == ("interrupted", "call-1")

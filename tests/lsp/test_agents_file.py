"""The daemon tells the run panel which AGENTS.md a run's system prompt holds."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from .conftest import StartDaemon


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


RULES = "Keep functions small.\n"


async def test_run_started_carries_the_agents_file_digest(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any], demo_project: Path
) -> None:
    (demo_project / "AGENTS.md").write_text(RULES)
    daemon = await start_daemon(fix_app_settings)

    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})

    (started,) = daemon.told("counterfoil/runStarted")
    assert started["agentsFile"] == {
        "path": "AGENTS.md",
        "sha256": hashlib.sha256(RULES.encode()).hexdigest(),
        "bytes": len(RULES),
        "notRead": None,
    }
    listed = await daemon.request("counterfoil/receipts", {})
    run = next(item for item in listed["runs"] if item["runId"] == result["runId"])
    assert run["agentsFile"] == started["agentsFile"]


async def test_the_setting_turns_it_off(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any], demo_project: Path
) -> None:
    (demo_project / "AGENTS.md").write_text(RULES)
    daemon = await start_daemon({**fix_app_settings, "agentsFile": False})

    await daemon.request("counterfoil/run", {"goal": "make double() double"})

    (started,) = daemon.told("counterfoil/runStarted")
    assert started["agentsFile"] is None

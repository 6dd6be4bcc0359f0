"""The daemon's run result carries the verdict as structured fields, computed from effects."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from .conftest import PYTEST_ARGV, StartDaemon, edit_app_model, reject


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


async def test_a_validated_run_reports_its_effects_changes_and_validation(
    start_daemon: StartDaemon, demo_project: Path, fix_app_settings: dict[str, Any]
) -> None:
    daemon = await start_daemon(fix_app_settings)

    result = await daemon.request("counterfoil/run", {"goal": "make double() double"})

    digest = hashlib.sha256((demo_project / "app.py").read_bytes()).hexdigest()
    verdict = result["verdict"]
    assert verdict["succeeded"] is True
    assert (verdict["approved"], verdict["rejected"], verdict["refused"], verdict["failed"]) == (
        ["call-1", "call-2"],
        [],
        [],
        [],
    )
    assert verdict["filesChanged"] == [{"path": "app.py", "sha256": digest, "toolCallId": "call-1"}]
    assert verdict["validation"] == "passed"
    assert verdict["validatedBy"] == "call-2"
    assert verdict["effects"] == [
        {
            "toolCallId": "call-1",
            "tool": "edit_file",
            "state": "approved",
            "path": "app.py",
            "argv": None,
            "sha256": digest,
            "exitStatus": None,
            "timedOut": False,
            "reason": None,
        },
        {
            "toolCallId": "call-2",
            "tool": "run_command",
            "state": "approved",
            "path": None,
            "argv": PYTEST_ARGV,
            "sha256": None,
            "exitStatus": 0,
            "timedOut": False,
            "reason": None,
        },
    ]


async def test_a_rejected_run_is_not_a_success_whatever_the_model_says(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    daemon = await start_daemon(
        {"model": edit_app_model(tmp_path, "fixed it"), "allowWrites": True}
    )
    daemon.answer = reject

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert result["completed"] is True and result["final"] == "fixed it"
    assert result["verdict"]["succeeded"] is False
    assert result["verdict"]["rejected"] == ["call-1"]
    assert result["verdict"]["filesChanged"] == []
    assert result["verdict"]["validation"] == "not_run"


async def test_a_run_that_could_not_start_still_has_an_empty_verdict(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    daemon = await start_daemon({"model": str(demo_project / "no-such-model")})

    result = await daemon.request("counterfoil/run", {"goal": "fix app.py"})

    assert result["reason"] == "model_error"
    assert result["verdict"] == {
        "succeeded": False,
        "approved": [],
        "rejected": [],
        "refused": [],
        "failed": [],
        "reviewRejected": [],
        "filesChanged": [],
        "validation": "not_run",
        "validatedBy": None,
        "effects": [],
    }

"""The editor's Export Evidence: the daemon signs a commit's runs into a git note, and the
receipts it serves name the runs a note of this person's already carries."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from counterfoil import protocol as messages
from counterfoil.cli.main import main

from .conftest import StartDaemon


@pytest.fixture
def start_daemon(start_daemon_in_process: StartDaemon) -> StartDaemon:
    """Behaviour, not transport: the daemon in-process (see conftest)."""
    return start_daemon_in_process


from .test_messages import conforms


def git(folder: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *arguments], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Ada")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "ada@example.com")
    assert main(["keys", "init"]) == 0


def commit_all(project: Path, message: str) -> None:
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", message)


async def test_export_evidence_adds_a_note_and_the_run_is_marked_exported(
    start_daemon: StartDaemon,
    fix_app_settings: dict[str, Any],
    demo_project: Path,
    signing_key: None,
) -> None:
    git(demo_project, "init", "-q")
    (demo_project / ".gitignore").write_text(".counterfoil/\n__pycache__/\n.pytest_cache/\n")
    commit_all(demo_project, "start")
    daemon = await start_daemon(fix_app_settings)
    run = await daemon.request("counterfoil/run", {"goal": "make double() double"})
    commit_all(demo_project, "double doubles")
    before = await daemon.request("counterfoil/receipts", {})
    assert before["exportedRuns"] == []

    exported = await daemon.request("counterfoil/exportEvidence", {"commit": "HEAD"})

    conforms(exported, messages.ExportEvidenceResult, "export")
    assert exported["ok"] is True, exported["error"]
    assert exported["validation"] == "passed"
    assert exported["files"] == 1 and exported["unreceipted"] == []
    assert git(demo_project, "notes", "--ref", "refs/notes/counterfoil", "list").strip()
    after = await daemon.request("counterfoil/receipts", {})
    assert after["exportedRuns"] == exported["runs"] == [run["runId"]]


async def test_export_evidence_outside_git_is_one_sentence_and_writes_nothing(
    start_daemon: StartDaemon, fix_app_settings: dict[str, Any], signing_key: None
) -> None:
    daemon = await start_daemon(fix_app_settings)
    await daemon.request("counterfoil/run", {"goal": "make double() double"})

    exported = await daemon.request("counterfoil/exportEvidence", {"commit": "HEAD"})

    assert exported["ok"] is False
    assert exported["error"].endswith("is not inside a git repository")

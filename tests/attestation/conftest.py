"""Each evidence test has its own signing key, and a project with one agent run committed."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.evidence import cli, commit_all, run_greeting, start_project


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "Ada")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "ada@example.com")
    assert cli("keys", "init")[0] == 0
    return folder


@pytest.fixture
def project(demo_project: Path) -> Path:
    """The demo project in git, with its allowed signers committed, then one agent run that
    edits greeting.py, writes NOTES.md and validates, committed as the agent left it."""
    start_project(demo_project)
    run_greeting(demo_project)
    commit_all(demo_project, "greeting says Welcome")
    return demo_project

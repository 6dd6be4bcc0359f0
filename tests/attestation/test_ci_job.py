"""The CI job docs/evidence.md gives, run as written: it checks a pull request with the base's
script and the base's allowed signers, so the pull request can change neither."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.evidence import (
    REPOSITORY,
    cli,
    commit_all,
    export,
    git,
    run_greeting,
    start_project,
)

SCRIPT = "scripts/verify-evidence.sh"


def documented_check() -> dict[str, Any]:
    """The job's step that runs the check, from the YAML block under "In CI"."""
    text = (REPOSITORY / "docs" / "evidence.md").read_text(encoding="utf-8")
    block = text.split("### In CI", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    steps = yaml.safe_load(block)["jobs"]["verify"]["steps"]
    step: dict[str, Any] = next(item for item in steps if "verify-evidence" in item.get("run", ""))
    return step


def run_documented_check(project: Path, scratch: Path) -> subprocess.CompletedProcess[str]:
    step = documented_check()
    assert step["env"] == {
        "BASE": "${{ github.event.pull_request.base.sha }}",
        "HEAD": "${{ github.event.pull_request.head.sha }}",
    }
    scratch.mkdir(exist_ok=True)
    environment = {
        **os.environ,
        "BASE": git(project, "rev-parse", "HEAD~1").strip(),
        "HEAD": git(project, "rev-parse", "HEAD").strip(),
        "RUNNER_TEMP": str(scratch),
        "COUNTERFOIL": f"{sys.executable} -m counterfoil",
    }
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=project, env=environment,
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.fixture
def base(demo_project: Path) -> Path:
    """The demo project whose base commits the check script and the allowed signers."""
    (demo_project / "scripts").mkdir()
    shutil.copyfile(REPOSITORY / SCRIPT, demo_project / SCRIPT)
    start_project(demo_project)
    return demo_project


def test_the_documented_job_passes_a_genuine_pull_request(base: Path, tmp_path: Path) -> None:
    run_greeting(base)
    commit_all(base, "greeting says Welcome")
    assert export(base)[0] == 0

    done = run_documented_check(base, tmp_path / "runner")

    assert done.returncode == 0, done.stdout + done.stderr
    assert 'signed by "ada@example.com"' in done.stdout


def test_the_documented_job_refuses_a_pull_request_that_brings_its_key_and_script(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "mallory"))
    assert cli("keys", "init")[0] == 0
    with (base / ".counterfoil" / "allowed_signers").open("a") as signers:
        signers.write(cli("keys", "export-public", "--owner", "mallory")[1])
    (base / SCRIPT).write_text("exit 0\n")
    run_greeting(base)
    commit_all(base, "greeting says Welcome, and the check says yes")
    assert export(base)[0] == 0

    done = run_documented_check(base, tmp_path / "runner")

    assert done.returncode == 1
    assert "finding: no signature is by a key in the allowed signers" in done.stdout

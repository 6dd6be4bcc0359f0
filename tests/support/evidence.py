"""A project in git with one agent run committed, and the commands a reviewer runs on it: what
the evidence tests share."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.terminal import run_cli

REPOSITORY = Path(__file__).resolve().parents[2]
GREETING = REPOSITORY / "fixtures" / "responses" / "greeting.jsonl"
NOTES = "refs/notes/counterfoil"
BASE = "base"  # the tag on the commit that added the allowed signers


def git(folder: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *arguments], capture_output=True, text=True, check=True
    )
    return done.stdout


def cli(*arguments: str, answers: str = "") -> tuple[int, str]:
    return run_cli(arguments, answers)


def commit_all(project: Path, message: str) -> str:
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", message)
    return git(project, "rev-parse", "HEAD").strip()


def start_project(folder: Path) -> None:
    """`folder` in git with the allowed signers (this person's key) committed, tagged BASE."""
    git(folder, "init", "-q", "-b", "main")
    (folder / ".gitignore").write_text(
        ".counterfoil/*\n!.counterfoil/allowed_signers\n__pycache__/\n"
    )
    (folder / ".counterfoil").mkdir()
    status, signers = cli("keys", "export-public", "--owner", "ada@example.com")
    assert status == 0
    (folder / ".counterfoil" / "allowed_signers").write_text(signers)
    commit_all(folder, "start")
    git(folder, "tag", BASE)


def run_greeting(project: Path) -> None:
    """The scripted run that edits greeting.py, writes NOTES.md and runs `python validate.py`."""
    run = (
        "agent", "make the greeting say Welcome", "--root", str(project),
        "--allow-writes", "--allow-command", "python validate.py",
        "--model", f"scripted:{GREETING}",
    )  # fmt: skip
    assert cli(*run, answers="y\ny\ny\n")[0] == 0


def export(project: Path, *more: str) -> tuple[int, str]:
    return cli("receipts", "export", "--root", str(project), *more)


def verify(project: Path, *more: str) -> tuple[int, str]:
    """`verify-bundle` with the allowed signers of the base, unless `more` names others."""
    named = any(item.startswith("--signers") for item in more)
    signers = () if named else ("--signers-from", BASE)
    return cli("receipts", "verify-bundle", "--repo", str(project), *signers, *more)


def note_on(project: Path, revision: str = "HEAD") -> dict[str, Any]:
    envelope: dict[str, Any] = json.loads(git(project, "notes", "--ref", NOTES, "show", revision))
    return envelope


def statement_in(envelope: dict[str, Any]) -> dict[str, Any]:
    statement: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return statement

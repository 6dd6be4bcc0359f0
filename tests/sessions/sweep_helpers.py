"""A scripted run of an edit and a command through the real CLI in a child process, for the
crash and kill tests: the project, the script, the flags and the account afterwards (its log
verified by the CLI in this process)."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
SERVER = REPOSITORY / "server"
COUNT_COMMAND = (
    "python3 -c \"import pathlib; p = pathlib.Path('count.txt'); "
    "p.write_text(str(int(p.read_text()) + 1) if p.exists() else '1')\""
)
SCRIPT = [
    {"tool": "read_file", "path": "app.py"},
    {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"},
    {"tool": "run_command", "argv": shlex.split(COUNT_COMMAND)},
    {"final": "changed and counted"},
]


def make_project(folder: Path) -> Path:
    root = folder / "project"
    root.mkdir(parents=True)
    (root / "app.py").write_text("answer = 1\n", encoding="utf-8")
    (folder / "script.jsonl").write_text(
        "".join(json.dumps(item) + "\n" for item in SCRIPT), encoding="utf-8"
    )
    return root


def agent_flags(folder: Path) -> list[str]:
    return [
        "--root",
        str(folder / "project"),
        "--model",
        f"scripted:{folder / 'script.jsonl'}",
        "--allow-writes",
        "--allow-command",
        COUNT_COMMAND,
    ]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SERVER)}


def counterfoil(arguments: list[str], answers: str = "", timeout: float = 60) -> tuple[int, str]:
    completed = subprocess.run(
        [sys.executable, "-m", "counterfoil", *arguments],
        check=False,
        input=answers,
        capture_output=True,
        text=True,
        env=environment(),
        timeout=timeout,
    )
    return completed.returncode, completed.stdout + completed.stderr


def verified(log: Path) -> int:
    """`counterfoil receipts verify LOG`'s exit status, from the CLI's own entry point in this
    process: it only reads the log, and a sweep checks one log per crash point (a process each
    was a third of the sweep's time)."""
    from counterfoil.cli.main import main

    return main(["receipts", "verify", str(log)], stdout=io.StringIO())


@dataclass(frozen=True)
class Account:
    """What the disk says happened."""

    app: str
    count: int
    edit_receipts: list[dict[str, object]]
    command_receipts: list[dict[str, object]]
    verified: bool
    unsettled_intents: list[str]


def account(folder: Path) -> Account:
    root = folder / "project"
    log = root / ".counterfoil" / "receipts.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    count_file = root / "count.txt"
    receipted = {line["tool_call_id"] for line in lines}
    unsettled = []
    for intent in (root / ".counterfoil" / "sessions").glob("*/intents/*.json"):
        record = json.loads(intent.read_text())
        if record["call_id"] not in receipted and "outcome" not in record:
            unsettled.append(record["call_id"])
    code = verified(log) if log.exists() else 0
    return Account(
        app=(root / "app.py").read_text(),
        count=int(count_file.read_text()) if count_file.exists() else 0,
        edit_receipts=[line for line in lines if line["tool"] == "edit_file"],
        command_receipts=[line for line in lines if line["tool"] == "run_command"],
        verified=code == 0,
        unsettled_intents=unsettled,
    )

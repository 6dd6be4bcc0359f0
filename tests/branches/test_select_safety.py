"""`select` is an effect like any other: each write has its intent first (a crash at any
durable step of a selection leaves a right account), and each file is checked against its
fork base right before it is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.branches.fork_helpers import cli, forked_run, log_of

from counterfoil import ReceiptStore, ToolPolicy
from counterfoil.branches.copies import apply_branch, fork_root
from counterfoil.branches.records import BranchStore
from counterfoil.errors import AgentError
from counterfoil.proposals import ToolProposal
from counterfoil.sessions.store import SessionStore

REPOSITORY = Path(__file__).resolve().parents[2]
HOOK = REPOSITORY / "tests" / "sessions" / "crash_points.py"
CRASH_STATUS = 137


def select_in_child(root: Path, branch: str, trace: Path, crash_at: int) -> int:
    completed = subprocess.run(
        [sys.executable, str(HOOK), str(trace), str(crash_at), "--", "select", branch]
        + ["--root", str(root)],
        check=False,
        input="y\n",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY / "server")},
        timeout=60,
    )
    return completed.returncode


def made(folder: Path) -> Path:
    folder.mkdir()
    return folder


def test_a_crash_at_every_durable_step_of_a_selection_leaves_a_right_account(
    tmp_path: Path,
) -> None:
    traced_root, traced_run = forked_run(made(tmp_path / "trace"))
    assert select_in_child(traced_root, f"{traced_run}.1", tmp_path / "trace.txt", 0) == 0
    points = (tmp_path / "trace.txt").read_text().splitlines()
    assert "receipt appended" in points

    wrong: list[str] = []
    for step, point in enumerate(points, start=1):
        root, run_id = forked_run(made(tmp_path / f"crash-{step}"))
        where = f"crash after step {step} ({point})"
        if select_in_child(root, f"{run_id}.1", tmp_path / "ignored.txt", step) != CRASH_STATUS:
            wrong.append(f"{where}: did not crash")
            continue
        status, output = cli(["select", f"{run_id}.1", "--root", str(root)], "y\n")
        lines = [json.loads(line) for line in log_of(root).read_text().splitlines()]
        writes = [line for line in lines if line["tool"] == "write_file"]
        states = [
            record.state for record in BranchStore(SessionStore(log_of(root))).branches(run_id)
        ]
        done = status == 2 and f"{run_id}.1 was selected" in output  # it had finished
        if not (status == 0 or done) or (root / "app.py").read_text() != "answer = 3\n":
            wrong.append(f"{where}: selecting again exited {status}: {output[-200:]}")
        if len(writes) != 1:
            wrong.append(f"{where}: app.py changed with {len(writes)} receipts")
        if states != ["selected", "discarded"]:
            wrong.append(f"{where}: the branches are {states}")
        if cli(["receipts", "verify", str(log_of(root))])[0] != 0:
            wrong.append(f"{where}: the log does not verify")
    assert wrong == []


def test_a_file_saved_while_an_earlier_change_is_asked_is_not_written_over(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    log = root / ".counterfoil" / "receipts.jsonl"
    log.parent.mkdir()
    copy = fork_root("one", root, log, tmp_path / "branches")
    (copy.root / "a.py").write_text("a = 2\n")
    (copy.root / "b.py").write_text("b = 2\n")

    def confirm(proposal: ToolProposal) -> bool:
        (root / "b.py").write_text("b = saved by the person\n")
        return True

    with pytest.raises(AgentError, match="the base changed since the fork: b.py"):
        apply_branch(copy, ToolPolicy(root, allow_writes=True), ReceiptStore(log), confirm)

    assert (root / "a.py").read_text() == "a = 2\n"
    assert (root / "b.py").read_text() == "b = saved by the person\n"

"""`counterfoil sessions gc` keeps what docs/terminal.md says it keeps: runs' records and branches'
receipt logs stay; only checkpoints and caches (prompt caches, branches' copies) go."""

from __future__ import annotations

from pathlib import Path

from tests.branches.fork_helpers import cli, finished_run, forked_run, log_of

from counterfoil.branches.records import BranchStore
from counterfoil.receipts import ReceiptStore
from counterfoil.sessions.store import SessionStore


def gc(root: Path) -> str:
    status, output = cli(["sessions", "gc", "--root", str(root)])
    assert status == 0, output
    return output


def test_gc_keeps_an_ended_runs_record_and_removes_its_checkpoint(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    folder = SessionStore(log_of(root)).run_folder(run_id)

    gc(root)

    assert not (folder / "checkpoint.json").exists()
    assert (folder / "decisions.jsonl").exists() and (folder / "decisions.head").exists()
    assert cli(["receipts", "verify", str(log_of(root))])[0] == 0


def test_gc_keeps_the_branches_receipt_logs_and_removes_their_copies(tmp_path: Path) -> None:
    root, run_id = forked_run(tmp_path)
    cli(["select", f"{run_id}.1", "--root", str(root)], "y\n")
    branches = BranchStore(SessionStore(log_of(root)))

    gc(root)

    for record in branches.branches(run_id):
        assert not branches.copy_root(record).exists()
        assert len(ReceiptStore(branches.copy_log(record), signer=None)) >= 1


def test_gc_removes_the_copies_of_branches_a_stopped_selection_left_ended(
    tmp_path: Path,
) -> None:
    root, run_id = forked_run(tmp_path)
    branches = BranchStore(SessionStore(log_of(root)))
    first, second = branches.branches(run_id)
    branches.write(first.updated_with(state="selected"))  # stopped before discarding the other

    output = gc(root)

    assert output.startswith("removed the checkpoints and caches of 1 ended runs")
    assert not branches.copy_root(second).exists()

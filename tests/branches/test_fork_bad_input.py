"""What `counterfoil fork` refuses: one sentence, exit 2, no branch made and no receipt
written."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.branches.fork_helpers import cli, finished_run, fork_script, log_of, model, write_script

from counterfoil.branches.records import BranchStore
from counterfoil.sessions.store import SessionStore


def fork(root: Path, run_id: str, script: Path, *steers: str) -> tuple[int, str]:
    arguments = ["fork", run_id, "--root", str(root), *model(script)]
    for steer in steers:
        arguments += ["--steer", steer]
    return cli(arguments)


def unchanged(root: Path) -> tuple[bytes, list[str]]:
    sessions = SessionStore(log_of(root))
    branches = BranchStore(sessions)
    made = [item.name for run in sessions.run_ids() for item in branches.branches(run)]
    return log_of(root).read_bytes(), made


def test_an_unknown_run_id_is_refused(tmp_path: Path) -> None:
    root, _ = finished_run(tmp_path)
    before = unchanged(root)

    status, output = fork(root, "nosuchrun", fork_script(tmp_path), "go")

    assert (status, output) == (2, f"error: there is no run nosuchrun in {root}\n")
    assert unchanged(root) == before


def test_a_run_without_a_checkpoint_is_refused(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    (log_of(root).parent / "sessions" / run_id / "checkpoint.json").unlink()
    before = unchanged(root)

    status, output = fork(root, run_id, fork_script(tmp_path), "go")

    assert (status, output) == (2, f"error: run {run_id} has no checkpoint\n")
    assert unchanged(root) == before


def test_a_run_that_stopped_before_its_first_observation_is_refused(tmp_path: Path) -> None:
    root, _ = finished_run(tmp_path)
    script = write_script(tmp_path / "answer.jsonl", {"final": "nothing to do"})
    cli(["agent", "say hi", "--root", str(root), *model(script)])
    sessions = SessionStore(log_of(root))
    run_id = next(
        run.run_id
        for run in sessions.runs()
        if run.record and run.record.checkpoint.task == "say hi"
    )
    before = unchanged(root)

    status, output = fork(root, run_id, fork_script(tmp_path), "go")

    assert status == 2
    assert output == (
        f"error: run {run_id} has no checkpoint to fork from: it stopped before its first "
        "complete observation\n"
    )
    assert unchanged(root) == before


@pytest.mark.parametrize("steers", [("",), ("go", "   ")])
def test_a_blank_steering_text_is_refused(tmp_path: Path, steers: tuple[str, ...]) -> None:
    root, run_id = finished_run(tmp_path)
    before = unchanged(root)

    status, output = fork(root, run_id, fork_script(tmp_path), *steers)

    assert (status, output) == (2, "error: steering must not be empty\n")
    assert unchanged(root) == before


def test_a_fork_whose_branch_was_selected_is_not_forked_again(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    assert fork(root, run_id, fork_script(tmp_path), "go")[0] == 0
    cli(["select", f"{run_id}.1", "--root", str(root)], "y\n")
    before = unchanged(root)

    status, output = fork(root, run_id, fork_script(tmp_path), "again")

    assert (status, output) == (
        2,
        f"error: the branches of run {run_id} were settled: {run_id}.1 was selected\n",
    )
    assert unchanged(root) == before


def test_a_run_being_resumed_elsewhere_is_not_forked(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    before = unchanged(root)

    with SessionStore(log_of(root)).lock(run_id):
        status, output = fork(root, run_id, fork_script(tmp_path), "go")

    assert status == 2
    assert output == (
        f"error: run {run_id} is already running or being resumed by another process\n"
    )
    assert unchanged(root) == before


def test_a_root_that_cannot_be_copied_leaves_no_branch_behind(tmp_path: Path) -> None:
    import os

    root, run_id = finished_run(tmp_path)
    os.mkfifo(root / "pipe")
    before = unchanged(root)

    status, output = fork(root, run_id, fork_script(tmp_path), "go")

    assert status == 2
    assert output.splitlines()[-1] == (
        "error: could not copy the root for a branch: pipe is not a regular file or a folder "
        "(a special file)"
    )
    assert unchanged(root) == before
    assert not (log_of(root).parent / "sessions" / run_id / "branches" / "1").exists()

"""A branch that leaves what cannot be applied (a symlink, a file over the limit) still ends
and is recorded, and the next branches run; a fork goes on with the run's own model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.branches.fork_helpers import READ, cli, edit, finished_run, log_of, model

from counterfoil.branches.records import BranchStore
from counterfoil.sessions.store import SessionStore


def branches_of(root: Path, run_id: str) -> BranchStore:
    return BranchStore(SessionStore(log_of(root)))


LINK = ["ln", "-s", "app.py", "link.py"]


def test_a_branch_that_leaves_a_symlink_ends_and_the_next_branch_runs(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)
    script = tmp_path / "link.jsonl"
    script.write_text(
        "\n".join(
            json.dumps(item)
            for item in (
                READ,
                edit("2", "1"),
                {"tool": "run_command", "argv": LINK},
                {"final": "x"},
            )
        )
    )
    arguments = [
        "fork",
        run_id,
        "--root",
        str(root),
        *model(script),
        "--steer",
        "a",
        "--steer",
        "b",
    ]

    status, output = cli([*arguments, "--allow-command", " ".join(LINK)], "y\ny\n")

    assert status == 0, output
    records = branches_of(root, run_id).branches(run_id)
    assert [(record.state, record.files_changed) for record in records] == [
        ("ended", ("link.py",)),
        ("ended", ("link.py",)),
    ]


def test_a_fork_without_model_goes_on_with_the_runs_model_and_says_so(tmp_path: Path) -> None:
    root, run_id = finished_run(tmp_path)

    status, output = cli(["fork", run_id, "--root", str(root), "--allow-writes", "--steer", "go"])

    assert status == 0, output
    assert f"model: scripted:{tmp_path / 'parent.jsonl'} (run {run_id} ran with it)\n" in output

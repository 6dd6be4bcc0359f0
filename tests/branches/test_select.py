"""`counterfoil select`: the chosen branch's changes applied to the real root as ordinary
effects, each shown and asked, receipted with the branch's name; the other branches'
copies removed; a base changed since the fork refused, naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.branches.fork_helpers import cli, finished_run, fork_script, forked_run, log_of, model

from counterfoil.branches.records import BranchStore
from counterfoil.receipts import ReceiptStore
from counterfoil.sessions.reopen import run_state
from counterfoil.sessions.store import SessionStore


@pytest.fixture
def forked(tmp_path: Path) -> tuple[Path, str]:
    return forked_run(tmp_path)


def store(root: Path) -> BranchStore:
    return BranchStore(SessionStore(log_of(root)))


def select(root: Path, branch: str, answers: str = "y\n") -> tuple[int, str]:
    return cli(["select", branch, "--root", str(root)], answers)


def test_selection_shows_and_asks_each_change_then_applies_it(forked: tuple[Path, str]) -> None:
    root, run_id = forked

    status, output = select(root, f"{run_id}.1")

    assert status == 0, output
    assert f"selecting branch {run_id}.1 (one): 1 change(s), each asked" in output
    assert "-answer = 2\n+answer = 3\n" in output and "Approve? [y/N] approved" in output
    assert (root / "app.py").read_text() == "answer = 3\n"


def test_the_selection_receipts_name_the_branch(forked: tuple[Path, str]) -> None:
    root, run_id = forked
    before = len(ReceiptStore(log_of(root), signer=None))

    select(root, f"{run_id}.2")

    (receipt,) = ReceiptStore(log_of(root), signer=None).receipts()[before:]
    assert (receipt.tool, receipt.changed_artifacts) == ("write_file", ("app.py",))
    assert receipt.evidence.approval.via == f"cli, selecting branch {run_id}.2"


def test_the_other_branches_are_discarded_and_their_copies_removed(
    forked: tuple[Path, str],
) -> None:
    root, run_id = forked
    branches = store(root)
    other = branches.branches(run_id)[1]

    select(root, f"{run_id}.1")

    chosen, discarded = branches.branches(run_id)
    assert (chosen.state, discarded.state) == ("selected", "discarded")
    assert discarded.reason == f"{run_id}.1 was selected"
    assert not branches.copy_root(other).exists()
    assert branches.copy_log(other).is_file()  # what it tried stays on record


def test_a_denied_change_applies_nothing_and_keeps_every_branch(forked: tuple[Path, str]) -> None:
    root, run_id = forked

    status, output = select(root, f"{run_id}.1", "n\n")

    assert status == 1
    assert "not applied: app.py: operator denied the tool action" in output
    assert (root / "app.py").read_text() == "answer = 2\n"
    assert [item.state for item in store(root).branches(run_id)] == ["ended", "ended"]


def test_a_base_changed_since_the_fork_is_refused_naming_the_file(
    forked: tuple[Path, str],
) -> None:
    root, run_id = forked
    (root / "app.py").write_text("answer = 9\n")
    log = log_of(root).read_bytes()

    status, output = select(root, f"{run_id}.1")

    assert status == 1
    assert output.splitlines()[-1] == (
        "not applied: the base changed since the fork: app.py; nothing was applied"
    )
    assert (root / "app.py").read_text() == "answer = 9\n"
    assert log_of(root).read_bytes() == log


def _no_change(root: Path, run_id: str) -> list[tuple[str, str]]:
    """What the bad-input tests check is unchanged: the records and the log."""
    branches = store(root)
    listed = [(item.name, item.state) for item in branches.branches(run_id)]
    return [*listed, ("log", log_of(root).read_text())]


@pytest.mark.parametrize(
    ("branch", "sentence"),
    [
        ("not-a-branch", "'not-a-branch' is not a branch name (they read RUN_ID.N)"),
        ("nosuchrun.1", "there is no run nosuchrun in {root}"),
        ("{run}.7", "there is no branch {run}.7"),
    ],
)
def test_a_name_that_is_no_branch_is_one_sentence_and_exit_2(
    forked: tuple[Path, str], branch: str, sentence: str
) -> None:
    root, run_id = forked
    before = _no_change(root, run_id)

    status, output = select(root, branch.format(run=run_id))

    assert (status, output) == (2, f"error: {sentence.format(root=root, run=run_id)}\n")
    assert _no_change(root, run_id) == before


def test_an_already_selected_fork_is_refused(forked: tuple[Path, str]) -> None:
    root, run_id = forked
    select(root, f"{run_id}.1")
    before = _no_change(root, run_id)

    status, output = select(root, f"{run_id}.2")

    assert status == 2
    assert output == (
        f"error: the branches of run {run_id} were settled: {run_id}.1 was selected\n"
    )
    assert _no_change(root, run_id) == before


def test_a_branch_of_a_run_in_another_folder_is_refused(forked: tuple[Path, str]) -> None:
    root, run_id = forked
    moved = root.with_name("moved")
    root.rename(moved)

    status, output = select(moved, f"{run_id}.1")

    assert status == 2
    assert output == f"error: branch {run_id}.1 was forked from a run of another folder ({root})\n"
    assert (moved / "app.py").read_text() == "answer = 2\n"


def test_a_branch_that_failed_its_checks_is_not_selected(forked: tuple[Path, str]) -> None:
    root, run_id = forked
    branches = store(root)
    record = branches.branches(run_id)[0]
    from counterfoil.branches.records import BranchCheck

    branches.write(
        record.updated_with(checks_package="pkg", checks=(BranchCheck("tests", False, "no"),))
    )

    status, output = select(root, f"{run_id}.1")

    assert (status, output) == (2, f"error: branch {run_id}.1 failed its checks: tests\n")
    assert (root / "app.py").read_text() == "answer = 2\n"


def test_a_change_already_in_the_root_is_not_asked_again(forked: tuple[Path, str]) -> None:
    root, run_id = forked
    (root / "app.py").write_text("answer = 3\n")  # as a partly applied selection leaves it

    status, output = select(root, f"{run_id}.1", "")

    assert status == 0, output
    assert "0 change(s)" in output and "Approve?" not in output
    assert store(root).load(run_id, 1).state == "selected"


def test_sessions_gc_keeps_a_run_whose_branches_wait_for_a_selection(
    forked: tuple[Path, str],
) -> None:
    root, run_id = forked

    status, output = cli(["sessions", "gc", "--root", str(root)])

    assert (status, output) == (
        0,
        "removed the checkpoints and caches of 0 ended runs (their records stay); 1 kept\n",
    )
    assert len(store(root).branches(run_id)) == 2


def test_a_paused_run_whose_branch_was_kept_is_no_longer_offered_to_resume(
    tmp_path: Path,
) -> None:
    root, run_id = finished_run(tmp_path)
    sessions = SessionStore(log_of(root))
    paused = sessions.load(run_id).with_state("paused", "paused", "2026-01-01T00:00:00+00:00")
    sessions.write(paused)
    arguments = ["fork", run_id, "--root", str(root), *model(fork_script(tmp_path))]
    assert cli([*arguments, "--steer", "one", "--steer", "two"])[0] == 0
    assert [run_state(run) for run in sessions.runs()] == ["paused"]

    select(root, f"{run_id}.1")

    (run,) = sessions.runs()
    assert (run_state(run), run.record and run.record.reason) == (
        "ended",
        f"branch {run_id}.1 was kept",
    )
    status, output = cli(["resume", "--root", str(root), *model(fork_script(tmp_path))])
    assert status == 2
    assert "nothing to resume" in output

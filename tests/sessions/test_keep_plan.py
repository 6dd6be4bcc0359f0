"""What "Keep this branch" would do, said before it is done: the changes it applies or that
there are none, the run it ends and the branches it discards, and whether to ask first."""

from __future__ import annotations

from pathlib import Path

from tests.branches.fork_helpers import forked_run, log_of

from counterfoil.branches.listing import branches_answer


def test_keep_says_the_changes_it_applies_and_the_branches_it_discards(tmp_path: Path) -> None:
    root, run_id = forked_run(tmp_path)

    first, _ = branches_answer(log_of(root), run_id).branches

    assert first.keepWould == (
        "Keep applies 1 change to the root, each asked like any edit and discards "
        f"{run_id}.2 (its copy is removed)."
    )
    assert first.keepAsks is True


def test_keep_says_when_there_is_nothing_to_apply(tmp_path: Path) -> None:
    root, run_id = forked_run(tmp_path)
    (root / "app.py").write_text("answer = 3\n", encoding="utf-8")  # what branch 1 wrote

    first, _ = branches_answer(log_of(root), run_id).branches

    assert first.keepWould is not None
    assert first.keepWould.startswith("Keep has nothing to apply: no file in the root changes")

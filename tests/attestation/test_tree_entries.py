"""A commit's changes are its tree against its first parent's, a merge's too, and a receipted
file counts as the agent's only as the regular file a receipt writes: not as a symlink whose
target text holds the same bytes, nor with an executable bit set by hand."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.evidence import BASE, export, git, note_on, statement_in, verify


def amend(project: Path) -> None:
    git(project, "add", "-A")
    git(project, "commit", "-q", "--amend", "--no-edit")


def merge_with_hand_changed_validation(project: Path) -> None:
    """A side branch from the base merged into the agent's commit, the merge itself carrying a
    hand-written validation script."""
    git(project, "checkout", "-q", "-b", "side", BASE)
    (project / "docs.txt").write_text("side work\n")
    git(project, "add", "docs.txt")
    git(project, "commit", "-q", "-m", "side work")
    git(project, "checkout", "-q", "main")
    git(project, "merge", "-q", "--no-ff", "--no-commit", "side")
    (project / "validate.py").write_text("print('OK: nothing checked')\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "merge side")


def test_a_merge_that_carries_a_hand_change_to_the_validation_script_is_refused(
    project: Path,
) -> None:
    assert export(project)[0] == 0
    run_id = statement_in(note_on(project))["predicate"]["runs"][0]["run_id"]
    merge_with_hand_changed_validation(project)
    assert export(project, "--run", run_id)[0] == 0

    status, output = verify(project)

    assert status == 1, output
    assert 'hand change: "validate.py"\n' in output
    assert 'hand change: "docs.txt"\n' in output
    assert "finding: validate.py: changed by hand, and validation command call-3" in output


def test_a_receipted_file_committed_as_a_symlink_to_its_own_bytes_is_a_finding(
    project: Path,
) -> None:
    notes = project / "NOTES.md"
    written = notes.read_text()
    notes.unlink()
    os.symlink(written, notes)
    amend(project)
    assert git(project, "ls-tree", "HEAD", "NOTES.md").startswith("120000 ")
    assert export(project)[0] == 0

    status, output = verify(project)

    assert status == 1, output
    assert 'hand change: "NOTES.md"\n' in output
    assert (
        "finding: NOTES.md: committed as a symlink, and a receipt writes only a regular" in output
    )


def test_a_receipted_file_made_executable_by_hand_is_a_finding(project: Path) -> None:
    git(project, "update-index", "--chmod=+x", "greeting.py")
    git(project, "commit", "-q", "--amend", "--no-edit")
    assert export(project)[0] == 0

    status, output = verify(project)

    assert status == 1, output
    assert 'hand change: "greeting.py"\n' in output
    assert "finding: greeting.py: committed with mode 100755, which no receipt set" in output

"""Every byte the commit changes is accounted for: a subject whose bytes a receipt wrote, or a
change by hand, listed, and a finding unless the team allows it (never for a file a validation
command reads or runs)."""

from __future__ import annotations

from pathlib import Path

from tests.support.evidence import export, git, verify


def amend(project: Path) -> None:
    git(project, "add", "-A")
    git(project, "commit", "-q", "--amend", "--no-edit")


def test_a_hand_change_to_the_validation_script_is_a_finding(project: Path) -> None:
    (project / "validate.py").write_text("print('OK: nothing checked')\n")
    amend(project)
    assert export(project)[0] == 0

    status, output = verify(project)

    assert status == 1
    assert 'hand change: "validate.py"\n' in output
    assert (
        "finding: validate.py: changed by hand, and validation command call-3 reads or runs it"
        in output
    )


def test_a_hand_change_is_a_finding_unless_a_pattern_allows_it(project: Path) -> None:
    (project / "CHANGELOG.md").write_text("- The greeting says Welcome.\n")
    amend(project)
    assert export(project)[0] == 0

    refused, refusal = verify(project)
    allowed, output = verify(project, "--allow-hand-changes", "CHANGELOG.md")

    assert refused == 1
    assert "finding: CHANGELOG.md: the committed bytes were not written by any receipt" in refusal
    assert allowed == 0, output
    assert 'hand change: "CHANGELOG.md" (allowed by "CHANGELOG.md")\n' in output
    assert "ok: evidence for " in output


def test_a_pattern_never_accepts_a_file_the_validation_runs(project: Path) -> None:
    (project / "validate.py").write_text("print('OK: nothing checked')\n")
    amend(project)
    assert export(project)[0] == 0

    status, output = verify(project, "--allow-hand-changes", "*.py")

    assert status == 1
    assert "finding: validate.py: changed by hand, and validation command call-3" in output


def test_a_file_removed_by_hand_is_a_hand_change(project: Path) -> None:
    git(project, "rm", "-q", "app.py")
    amend(project)
    assert export(project)[0] == 0

    status, output = verify(project)

    assert status == 1
    assert 'hand change: "app.py"\n' in output
    assert "finding: app.py: removed by hand, not by any receipt" in output


def test_the_agents_own_changes_are_no_hand_changes(project: Path) -> None:
    assert export(project)[0] == 0

    status, output = verify(project)

    assert status == 0, output
    assert "hand change" not in output


def test_export_names_each_hand_change_for_its_author(project: Path) -> None:
    (project / "CHANGELOG.md").write_text("- The greeting says Welcome.\n")
    amend(project)

    status, output = export(project)

    assert status == 0
    assert 'not from a receipt: "CHANGELOG.md" (changed by hand' in output

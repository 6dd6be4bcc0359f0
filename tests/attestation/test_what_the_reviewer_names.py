"""A reviewer's check takes nothing from the change under review: who may sign comes from a
file or the base revision it names, and a target is a revision unless it is plainly a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.evidence import (
    NOTES,
    cli,
    commit_all,
    export,
    git,
    run_greeting,
    start_project,
    verify,
)


def test_verify_bundle_without_a_signers_source_refuses_in_one_sentence(project: Path) -> None:
    assert export(project)[0] == 0

    status, output = cli("receipts", "verify-bundle", "--repo", str(project))

    assert status == 2
    assert output.startswith("error: name who may sign: --signers-from BASE")
    assert output.count("\n") == 1


def test_a_pull_request_that_adds_its_own_key_does_not_verify_against_the_base(
    demo_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_project(demo_project)
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "mallory"))
    assert cli("keys", "init")[0] == 0
    own_line = cli("keys", "export-public", "--owner", "ada@example.com")[1]
    with (demo_project / ".counterfoil" / "allowed_signers").open("a") as signers:
        signers.write(own_line)
    run_greeting(demo_project)
    commit_all(demo_project, "greeting says Welcome")
    assert export(demo_project)[0] == 0

    status, output = verify(demo_project, "HEAD")

    assert status == 1
    assert "finding: no signature is by a key in the allowed signers" in output
    assert "ok:" not in output


def test_signers_from_a_revision_without_them_is_refused(project: Path) -> None:
    assert export(project)[0] == 0
    git(project, "rm", "-q", ".counterfoil/allowed_signers")
    commit_all(project, "no signers")

    status, output = verify(project, "HEAD~1", "--signers-from", "HEAD")

    assert status == 2
    assert "has no .counterfoil/allowed_signers; nobody may sign" in output


def test_a_committed_file_named_head_is_never_read_as_the_evidence(project: Path) -> None:
    assert export(project)[0] == 0
    (project / "HEAD").write_text(git(project, "notes", "--ref", NOTES, "show", "HEAD"))
    commit_all(project, "a commit without a note, holding an older genuine one")

    status, output = verify(project, "HEAD")

    assert status == 2
    assert "has no note under refs/notes/counterfoil" in output


def test_an_envelope_path_with_a_slash_is_a_file_checked_against_head(project: Path) -> None:
    envelope = project.parent / "evidence.json"
    assert export(project, "--out", str(envelope))[0] == 0
    assert verify(project, str(envelope))[0] == 0
    (project / "greeting.py").write_text('GREETING = "Hi"\n')
    commit_all(project, "a later commit the file is not evidence for")

    status, output = verify(project, str(envelope))

    assert status == 1
    assert "finding: the evidence is for commit" in output


def test_an_envelope_file_named_with_file_is_read(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert export(project, "--out", str(project.parent / "HEAD"))[0] == 0
    monkeypatch.chdir(project.parent)

    status, output = verify(project, "--file", "HEAD")

    assert status == 0, output

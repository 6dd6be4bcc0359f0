"""Evidence that travels with the commit: export a run's receipts as a signed in-toto
attestation in a git note, and verify it offline — here with an independent verifier too."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from tests.support.terminal import run_cli

REPOSITORY = Path(__file__).resolve().parents[2]
GREETING = REPOSITORY / "fixtures" / "responses" / "greeting.jsonl"
NOTES = "refs/notes/counterfoil"
BASE = "base"  # the tag on the commit that added the allowed signers


def git(folder: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *arguments], capture_output=True, text=True, check=True
    )
    return done.stdout


def cli(*arguments: str, answers: str = "") -> tuple[int, str]:
    return run_cli(arguments, answers)


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "Ada")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "ada@example.com")
    assert cli("keys", "init")[0] == 0
    return folder


def commit_all(project: Path, message: str) -> str:
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", message)
    return git(project, "rev-parse", "HEAD").strip()


@pytest.fixture
def project(demo_project: Path) -> Path:
    """The demo project in git, with its allowed signers committed, then one agent run that
    edits greeting.py, writes NOTES.md and validates, committed as the agent left it."""
    git(demo_project, "init", "-q", "-b", "main")
    (demo_project / ".gitignore").write_text(
        ".counterfoil/*\n!.counterfoil/allowed_signers\n__pycache__/\n"
    )
    (demo_project / ".counterfoil").mkdir()
    status, signers = cli("keys", "export-public", "--owner", "ada@example.com")
    assert status == 0
    (demo_project / ".counterfoil" / "allowed_signers").write_text(signers)
    commit_all(demo_project, "start")
    git(demo_project, "tag", BASE)
    run = (
        "agent", "make the greeting say Welcome", "--root", str(demo_project),
        "--allow-writes", "--allow-command", "python validate.py",
        "--model", f"scripted:{GREETING}",
    )  # fmt: skip
    assert cli(*run, answers="y\ny\ny\n")[0] == 0
    commit_all(demo_project, "greeting says Welcome")
    return demo_project


def export(project: Path, *more: str) -> tuple[int, str]:
    return cli("receipts", "export", "--root", str(project), *more)


def verify(project: Path, *more: str) -> tuple[int, str]:
    """`verify-bundle` with the allowed signers of the base, unless `more` names others."""
    signers = () if "--signers" in more else ("--signers-from", BASE)
    return cli("receipts", "verify-bundle", "--repo", str(project), *signers, *more)


def independent_check(envelope: dict[str, Any], public_key: str, project: Path) -> dict[str, Any]:
    """DSSE and Ed25519 by the book, with `cryptography` alone: no Counterfoil code."""
    payload = base64.b64decode(str(envelope["payload"]))
    kind = str(envelope["payloadType"]).encode()
    message = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)
    raw = base64.b64decode(public_key.removeprefix("ed25519:"))
    signature = envelope["signatures"][0]  # type: ignore[index]
    Ed25519PublicKey.from_public_bytes(raw).verify(base64.b64decode(signature["sig"]), message)
    statement = json.loads(payload)
    for subject in statement["subject"]:
        committed = subprocess.run(
            ["git", "-C", str(project), "show", f"HEAD:{subject['name']}"],
            capture_output=True, check=True,
        ).stdout  # fmt: skip
        assert hashlib.sha256(committed).hexdigest() == subject["digest"]["sha256"]
    return statement  # type: ignore[no-any-return]


def test_an_independent_verifier_accepts_the_exported_note(project: Path) -> None:
    status, output = export(project)
    assert status == 0, output
    envelope = json.loads(git(project, "notes", "--ref", NOTES, "show", "HEAD"))
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    public_key = (project / ".counterfoil/allowed_signers").read_text().split()[1]
    statement = independent_check(envelope, public_key, project)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert sorted(item["name"] for item in statement["subject"]) == ["NOTES.md", "greeting.py"]
    predicate = statement["predicate"]
    assert predicate["runs"][0]["goal"] == "make the greeting say Welcome"
    assert [effect["tool"] for effect in predicate["effects"]] == [
        "edit_file", "write_file", "run_command",
    ]  # fmt: skip
    assert all(effect["approval"]["by"] for effect in predicate["effects"])
    assert predicate["validation"] == {
        "status": "passed", "call_id": "call-3", "argv": ["python", "validate.py"],
        "exit_status": 0, "after": "call-2",
    }  # fmt: skip
    assert predicate["log"]["head_link"]


def test_verify_bundle_accepts_an_untouched_note(project: Path) -> None:
    assert export(project)[0] == 0
    status, output = verify(project)
    assert status == 0, output
    assert output.startswith("ok: evidence for ")
    assert "2 file(s), validation passed" in output


def tampered_note(project: Path, change: object) -> None:
    """Rewrite the note on HEAD after `change(envelope, statement)` has edited it."""
    envelope = json.loads(git(project, "notes", "--ref", NOTES, "show", "HEAD"))
    statement = json.loads(base64.b64decode(envelope["payload"]))
    change(envelope, statement)  # type: ignore[operator]
    if "payload_kept" not in envelope:
        envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    envelope.pop("payload_kept", None)
    note = json.dumps(envelope)
    git(project, "notes", "--ref", NOTES, "add", "-f", "-m", note, "HEAD")


def test_a_changed_payload_byte_is_refused(project: Path) -> None:
    assert export(project)[0] == 0

    def change(envelope: dict[str, Any], statement: dict[str, Any]) -> None:
        statement["predicate"]["runs"][0]["goal"] = "something else"

    tampered_note(project, change)
    status, output = verify(project)
    assert status == 1
    assert "finding: the signature does not verify" in output


def test_a_changed_subject_digest_is_refused_even_if_resigned_elsewhere(project: Path) -> None:
    assert export(project)[0] == 0

    def change(envelope: dict[str, Any], statement: dict[str, Any]) -> None:
        statement["subject"][0]["digest"]["sha256"] = "0" * 64

    tampered_note(project, change)
    status, output = verify(project)
    assert status == 1
    assert "the committed bytes are not the ones attested" in output


def test_a_note_moved_to_another_commit_is_refused(project: Path) -> None:
    assert export(project)[0] == 0
    note = git(project, "notes", "--ref", NOTES, "show", "HEAD")
    (project / "greeting.py").write_text('GREETING = "Welcome!"\n')
    commit_all(project, "hand edit")
    git(project, "notes", "--ref", NOTES, "add", "-f", "-m", note, "HEAD")
    status, output = verify(project)
    assert status == 1
    assert "the evidence is for commit" in output
    assert "greeting.py: the committed bytes are not the ones attested" in output


def test_a_key_not_in_the_allowed_signers_is_refused(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert export(project)[0] == 0
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "other"))
    assert cli("keys", "init")[0] == 0
    other_signers = tmp_path / "allowed"
    other_signers.write_text(cli("keys", "export-public", "--owner", "eve")[1])
    status, output = verify(project, "--signers", str(other_signers))
    assert status == 1
    assert "finding: no signature is by a key in the allowed signers" in output


def test_a_file_committed_with_bytes_no_receipt_wrote_is_named(project: Path) -> None:
    (project / "greeting.py").write_text('GREETING = "Welcome, friend"\n')
    git(project, "commit", "-q", "--amend", "-a", "--no-edit")
    status, output = export(project)
    assert status == 0
    assert 'not from a receipt: "greeting.py"' in output
    status, output = verify(project)
    assert status == 1
    assert "greeting.py: the committed bytes were not written by any receipt" in output


def test_export_of_a_log_that_does_not_verify_is_refused_in_one_sentence(project: Path) -> None:
    log = project / ".counterfoil" / "receipts.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(lines[0].replace("Welcome", "Welcome!!") + "".join(lines[1:]))
    status, output = export(project)
    assert status == 1
    assert output.startswith("error: the receipt log ")
    assert "does not verify" in output
    assert output.count("\n") == 1
    assert git(project, "notes", "--ref", NOTES, "list") == ""


def test_a_note_survives_push_and_fetch_between_two_repositories(
    project: Path, tmp_path: Path
) -> None:
    assert export(project)[0] == 0
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(project, "push", "-q", str(remote), "main", BASE, NOTES)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    git(clone, "fetch", "-q", "origin", f"{NOTES}:{NOTES}")
    status, output = verify(clone)
    assert status == 0, output


def test_the_ci_script_fails_on_a_tampered_commit_and_passes_a_valid_one(project: Path) -> None:
    base = git(project, "rev-parse", "HEAD~1").strip()
    assert export(project)[0] == 0
    script = REPOSITORY / "scripts" / "verify-evidence.sh"
    environment = {**os.environ, "COUNTERFOIL": f"{sys.executable} -m counterfoil"}

    def ci() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(script), base, "HEAD"], cwd=project, env=environment,
            capture_output=True, text=True, check=False,
        )  # fmt: skip

    valid = ci()
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "ok: evidence for" in valid.stdout
    (project / "greeting.py").write_text('GREETING = "Hi"\n')
    commit_all(project, "second commit")
    note = git(project, "notes", "--ref", NOTES, "show", "HEAD~1")
    git(project, "notes", "--ref", NOTES, "add", "-f", "-m", note, "HEAD")
    tampered = ci()
    assert tampered.returncode == 1
    assert "the agent evidence does not verify" in tampered.stderr


def test_keys_export_public_prints_an_allowed_signers_line(config: Path) -> None:
    status, output = cli("keys", "export-public", "--owner", "ada@example.com")
    assert status == 0
    owner, key = output.split()
    assert owner == "ada@example.com" and key.startswith("ed25519:")

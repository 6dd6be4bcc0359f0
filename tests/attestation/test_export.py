"""Evidence that travels with the commit: export a run's receipts as a signed in-toto
attestation in a git note, and verify it offline — here with an independent verifier too."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from tests.support.evidence import (
    BASE,
    NOTES,
    REPOSITORY,
    cli,
    commit_all,
    export,
    git,
    verify,
)


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


def in_toto_v1_problems(statement: dict[str, Any]) -> list[str]:
    """The Statement against in-toto's v1 layer, as its specification words it: `_type`,
    `subject` (ResourceDescriptors with a `name` and a `digest` of algorithm to lowercase hex),
    `predicateType` (a URI) and `predicate` (an object); nothing else at the top."""
    problems = []
    if set(statement) != {"_type", "subject", "predicateType", "predicate"}:
        problems.append(f"top-level fields {sorted(statement)}")
    if statement.get("_type") != "https://in-toto.io/Statement/v1":
        problems.append("_type")
    subjects = statement.get("subject")
    if not isinstance(subjects, list) or not subjects:
        problems.append("subject is not a non-empty list")
    for subject in subjects if isinstance(subjects, list) else []:
        digest = subject.get("digest") if isinstance(subject, dict) else None
        if not isinstance(subject.get("name"), str) or not isinstance(digest, dict) or not digest:
            problems.append(f"subject {subject!r}")
            continue
        for algorithm, value in digest.items():
            if algorithm != algorithm.lower() or not re.fullmatch(r"[0-9a-f]+", str(value)):
                problems.append(f"digest {algorithm}: {value!r}")
    kind = urlsplit(str(statement.get("predicateType")))
    if not kind.scheme or not (kind.netloc or kind.path):
        problems.append("predicateType is not a URI")
    if not isinstance(statement.get("predicate"), dict):
        problems.append("predicate is not an object")
    return problems


def test_an_independent_verifier_accepts_the_exported_note(project: Path) -> None:
    status, output = export(project)
    assert status == 0, output
    envelope = json.loads(git(project, "notes", "--ref", NOTES, "show", "HEAD"))
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    public_key = (project / ".counterfoil/allowed_signers").read_text().split()[1]
    statement = independent_check(envelope, public_key, project)
    assert in_toto_v1_problems(statement) == []
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


def test_the_ok_line_names_the_signer_and_its_key(project: Path) -> None:
    assert export(project)[0] == 0
    public_key = (project / ".counterfoil/allowed_signers").read_text().split()[1]
    raw = base64.b64decode(public_key.removeprefix("ed25519:"))

    status, output = verify(project)

    assert status == 0, output
    key_id = "SHA256:" + hashlib.sha256(raw).hexdigest()
    assert f'verified, signed by "ada@example.com" (key {key_id}): 1 run(s)' in output


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

"""One validation rule: the run's verdict, the export and the verifier all judge validation with
`compute_verdict`, the verifier recomputing it from the effects the Statement carries."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.evidence import (
    GREETING,
    cli,
    commit_all,
    export,
    note_on,
    start_project,
    statement_in,
    verify,
)

from counterfoil.attestation.check import validation_findings
from counterfoil.attestation.statement import validation_entry
from counterfoil.sessions.decisions import DECISIONS_FILE, read_entries
from counterfoil.sessions.store import SessionStore

STAMP = "import pathlib\npathlib.Path('stamp.txt').write_text('formatted\\n')\n"


def effect(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"call_id": call_id, "changed": [], **fields}


EDIT = effect("call-1", tool="edit_file", changed=[{"path": "a.py", "sha256": "1" * 64}])
TEST = effect("call-2", tool="run_command", argv=["python", "t.py"], exit_status=0)
FORMAT = effect(
    "call-3",
    tool="run_command",
    argv=["python", "fmt.py"],
    exit_status=0,
    changed=[{"path": "a.py", "sha256": "2" * 64}],
)


def predicate(*effects: dict[str, Any], claimed: str) -> dict[str, Any]:
    return {"effects": list(effects), "validation": {"status": claimed}}


def test_a_command_that_changed_files_itself_leaves_the_evidence_stale() -> None:
    findings = validation_findings(predicate(EDIT, TEST, FORMAT, claimed="stale"))

    assert findings == [
        "the validation is stale: call-3 changed files itself, and nothing checked it since"
    ]


def test_a_command_before_the_last_change_leaves_the_evidence_stale() -> None:
    findings = validation_findings(predicate(TEST, EDIT, claimed="stale"))

    assert findings == [
        "the validation is stale: call-2 ran before the last change, and nothing checked it since"
    ]


def test_the_verifier_names_a_claim_its_effects_do_not_show() -> None:
    findings = validation_findings(predicate(EDIT, TEST, FORMAT, claimed="passed"))

    assert findings[0] == "the predicate says validation passed, its effects stale"


def test_a_rejected_review_after_the_change_is_not_exported_as_passed() -> None:
    rejected = {**TEST, "review": {"decision": "rejected", "applied": []}}

    assert validation_entry([EDIT, rejected])["status"] == "not_run"
    assert validation_entry([EDIT, TEST, {**rejected, "call_id": "call-3"}])["status"] == "passed"


def test_a_run_whose_last_command_changed_files_does_not_verify(demo_project: Path) -> None:
    (demo_project / "stamp.py").write_text(STAMP)
    start_project(demo_project)
    script = demo_project.parent / "responses.jsonl"
    lines = GREETING.read_text().splitlines()
    stamp = json.dumps({"tool": "run_command", "argv": ["python", "stamp.py"]})
    script.write_text("\n".join([*lines[:-1], stamp, lines[-1]]) + "\n")
    run = (
        "agent", "make the greeting say Welcome", "--root", str(demo_project),
        "--allow-writes", "--allow-command", "python validate.py",
        "--allow-command", "python stamp.py", "--model", f"scripted:{script}",
    )  # fmt: skip
    status, output = cli(*run, answers="y\ny\ny\ny\n")
    assert "validation: stale: call-4 `python stamp.py` changed files itself" in output
    commit_all(demo_project, "greeting says Welcome, stamped")
    assert export(demo_project)[0] == 0
    assert statement_in(note_on(demo_project))["predicate"]["validation"]["status"] == "stale"

    status, output = verify(demo_project)

    assert status == 1
    assert "finding: the validation is stale: call-4 changed files itself" in output


FORMAT_NOTES = "import pathlib\npathlib.Path('NOTES.md').write_text('# Notes, formatted\\n')\n"


needs_review = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="review on Linux needs bubblewrap (apt-get install bubblewrap)",
)


def run_with_a_rejected_review(project: Path) -> str:
    """The greeting run under review, then `python fmt.py`, whose change the person rejects;
    committed. The terminal's output."""
    (project / "fmt.py").write_text(FORMAT_NOTES)
    start_project(project)
    script = project.parent / "responses.jsonl"
    lines = GREETING.read_text().splitlines()
    fmt = json.dumps({"tool": "run_command", "argv": ["python", "fmt.py"]})
    script.write_text("\n".join([*lines[:-1], fmt, lines[-1]]) + "\n")
    run = (
        "agent", "make the greeting say Welcome", "--root", str(project),
        "--allow-writes", "--allow-command", "python validate.py",
        "--allow-command", "python fmt.py", "--sandbox", "review",
        "--model", f"scripted:{script}",
    )  # fmt: skip
    _, output = cli(*run, answers="y\ny\ny\ny\nn\n")
    commit_all(project, "greeting says Welcome")
    return output


@needs_review
def test_a_rejected_review_is_counted_and_validates_nothing_in_the_evidence(
    demo_project: Path,
) -> None:
    output = run_with_a_rejected_review(demo_project)
    assert "1 review rejected" in output
    assert "validation: passed: call-3 `python validate.py` exited 0" in output

    status, output = export(demo_project)

    assert status == 0, output
    assert "4 effect(s) (1 review rejected)" in output
    validation = statement_in(note_on(demo_project))["predicate"]["validation"]
    assert (validation["status"], validation["call_id"]) == ("passed", "call-3")
    status, output = verify(demo_project)
    assert status == 0, output
    assert "4 effect(s) (1 review rejected)" in output


@needs_review
def test_the_run_record_counts_a_rejected_review(demo_project: Path) -> None:
    run_with_a_rejected_review(demo_project)

    sessions = SessionStore(demo_project / ".counterfoil" / "receipts.jsonl")
    (run_id,) = sessions.run_ids()
    entries = read_entries(sessions.run_folder(run_id) / DECISIONS_FILE)
    ended = next(entry for entry in entries if entry.get("kind") == "ended")
    assert ended["verdict"]["effects"]["review rejected"] == 1
    assert ended["verdict"]["validation"] == "passed"

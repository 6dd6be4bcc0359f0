"""The run's own record beside its checkpoint: every decision on every call id, chained,
checked by `receipts verify`, and shown by `receipts show` for calls without a receipt."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from sweep_helpers import agent_flags, make_project
from tests.support.terminal import run_cli as cli

from counterfoil.cli.main import main
from counterfoil.receipts.signing import PUBLIC_KEY_FILE, init_key
from counterfoil.sessions.decisions import read_entries
from counterfoil.sessions.store import SessionStore


def log_of(folder: Path) -> Path:
    return folder / "project" / ".counterfoil" / "receipts.jsonl"


def record_of(folder: Path) -> Path:
    (run_id,) = SessionStore(log_of(folder)).run_ids()
    return log_of(folder).parent / "sessions" / run_id / "decisions.jsonl"


def test_a_run_records_its_goal_each_decision_and_its_end(tmp_path: Path) -> None:
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")

    entries = read_entries(record_of(tmp_path))

    assert [entry["kind"] for entry in entries] == ["started", "decision", "decision", "ended"]
    assert entries[0]["goal"] == "fix app.py" and entries[0]["via"] == "cli"
    assert [(entry["call_id"], entry["state"]) for entry in entries[1:3]] == [
        ("call-1", "rejected"),
        ("call-2", "approved"),
    ]
    assert entries[3]["reason"] == "completed"
    assert entries[3]["verdict"]["effects"]["rejected"] == 1


def test_receipts_show_explains_a_call_id_without_a_receipt(tmp_path: Path) -> None:
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")

    _, output = cli(["receipts", "show", str(log_of(tmp_path))])

    (line,) = [line for line in output.splitlines() if line.startswith("call-1 ")]
    assert line.endswith("edit_file   rejected app.py")


def test_receipts_verify_catches_an_edited_run_record(tmp_path: Path) -> None:
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")
    path = record_of(tmp_path)
    assert cli(["receipts", "verify", str(log_of(tmp_path))])[0] == 0
    lines = path.read_text().splitlines()
    entry = json.loads(lines[1])
    entry["state"] = "approved"
    lines[1] = json.dumps(entry, sort_keys=True, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n")

    status, output = cli(["receipts", "verify", str(log_of(tmp_path))])

    assert status == 1
    assert "error: the record of run " in output and "line 2 does not match its link" in output


def test_stopping_at_an_open_approval_is_recorded_as_interrupted(tmp_path: Path) -> None:
    make_project(tmp_path)

    class CtrlC(io.StringIO):
        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            raise KeyboardInterrupt

    main(["agent", "fix app.py", *agent_flags(tmp_path)], stdin=CtrlC(), stdout=io.StringIO())

    decisions = [e for e in read_entries(record_of(tmp_path)) if e["kind"] == "decision"]
    assert [(entry["call_id"], entry["state"]) for entry in decisions] == [
        ("call-1", "interrupted")
    ]
    assert read_entries(record_of(tmp_path))[-1]["kind"] == "paused"


def signed_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run signed with a fresh key: a No, then a Yes; the public key's file."""
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    init_key()
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")
    return tmp_path / "config" / PUBLIC_KEY_FILE


def test_receipts_verify_catches_a_run_record_cut_at_its_end(tmp_path: Path) -> None:
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")
    path = record_of(tmp_path)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))  # its end

    status, output = cli(["receipts", "verify", str(log_of(tmp_path))])

    assert status == 1
    assert "it ends before its head (3 of 4 lines): it was cut" in output


def test_receipts_verify_with_the_key_catches_a_cut_record_whose_head_was_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    public_key = signed_run(tmp_path, monkeypatch)
    path = record_of(tmp_path)
    lines = path.read_text().splitlines(keepends=True)[:-2]  # the No and the end
    path.write_text("".join(lines))
    last = json.loads(lines[-1])
    (path.parent / "decisions.head").write_text(json.dumps({"count": 2, "link": last["link"]}))

    status, output = cli(
        ["receipts", "verify", str(log_of(tmp_path)), "--public-key", str(public_key)]
    )

    assert status == 1
    assert "its head is not signed (it was rewritten)" in output


def test_receipts_verify_finds_a_run_that_left_receipts_without_its_record(
    tmp_path: Path,
) -> None:
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")
    path = record_of(tmp_path)
    run_id = path.parent.name
    path.unlink()
    (path.parent / "decisions.head").unlink()

    status, output = cli(["receipts", "verify", str(log_of(tmp_path))])

    assert status == 1
    assert f"error: run {run_id} left receipts but has no run record" in output


def test_receipts_show_prints_nothing_of_an_edited_record_and_says_so(tmp_path: Path) -> None:
    make_project(tmp_path)
    cli(["agent", "fix app.py", *agent_flags(tmp_path)], "n\ny\n")
    path = record_of(tmp_path)
    path.write_text(path.read_text().replace('"rejected"', '"approved"', 1))

    status, output = cli(["receipts", "show", str(log_of(tmp_path))])

    assert status == 1
    assert "rejected" not in output and "verified" not in output
    assert "line 2 does not match its link" in output

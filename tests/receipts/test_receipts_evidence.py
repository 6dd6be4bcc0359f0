"""Receipts carry the evidence: run, time, digests, what ran, who approved what they saw;
the bytes themselves sit in a content store; call ids are never reused."""

from __future__ import annotations

import getpass
import hashlib
import json
import re
from pathlib import Path

import pytest
from tests.support.receipts import HELLO, approving_workspace, log_path, run_hello, write

from counterfoil import ReceiptStore, ToolAction, verify_receipt_log
from counterfoil.cli.main import main
from counterfoil.receipts import CHAIN_KEY, canonical_json
from counterfoil.receipts.head import head_path


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lines_of(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def edit_and_run(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("value = 1\n")
    workspace = approving_workspace(tmp_path, run_id="run-a")
    workspace.read_file("app.py")
    edit = ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"})
    assert workspace.execute(edit) == "edited app.py"
    assert workspace.execute(run_hello()).startswith("status: 0")
    return log_path(tmp_path)


def test_a_file_receipt_carries_run_time_digests_and_approval(tmp_path: Path) -> None:
    line = lines_of(edit_and_run(tmp_path))[0]
    assert line["run_id"] == "run-a"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(line["time"]))
    assert line["base_sha256"] == sha(b"value = 1\n")
    assert line["result_sha256"] == sha(b"value = 2\n")
    assert line["approval"] == {
        "decision": "approved",
        "by": getpass.getuser(),
        "via": "cli",
        "shown_sha256": sha(b"value = 2\n"),
        "modified": False,
        "grant": "settings",
    }


def test_a_new_file_receipt_has_a_null_base(tmp_path: Path) -> None:
    approving_workspace(tmp_path).execute(write("new.md", "n\n"))
    line = lines_of(log_path(tmp_path))[0]
    assert line["base_sha256"] is None and line["result_sha256"] == sha(b"n\n")


def test_a_command_receipt_carries_argv_cwd_status_duration_and_output(tmp_path: Path) -> None:
    line = lines_of(edit_and_run(tmp_path))[1]
    assert line["argv"] == list(HELLO) and line["cwd"] == str(tmp_path.resolve())
    assert line["exit_status"] == 0 and isinstance(line["duration_seconds"], float)
    assert line["output_sha256"] == sha(b"hello\n") and line["output_truncated"] is False
    shown = {"argv": list(HELLO), "cwd": str(tmp_path.resolve()), "timeout_seconds": 30.0}
    approval = line["approval"]
    assert isinstance(approval, dict)
    assert approval["shown_sha256"] == sha(canonical_json(shown).encode())


def test_the_editor_is_named_as_the_way_of_approval(tmp_path: Path) -> None:
    approving_workspace(tmp_path, approval_via="editor").execute(write("a.md", "a\n"))
    assert lines_of(log_path(tmp_path))[0]["approval"]["via"] == "editor"  # type: ignore[index]


@pytest.mark.parametrize("field", ["run_id", "time", "result_sha256", "approval", "argv"])
def test_every_evidence_field_is_covered_by_the_chain(tmp_path: Path, field: str) -> None:
    log = edit_and_run(tmp_path)
    records = lines_of(log)
    target = records[1] if field == "argv" else records[0]
    target[field] = {"forged": True}
    log.write_text("".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records))

    report = verify_receipt_log(log)
    assert not report.ok and "chain does not match" in (report.error or "")


def test_auto_ids_are_not_reused_across_runs_even_for_denied_calls(tmp_path: Path) -> None:
    denied = approving_workspace(tmp_path, answer=False)
    assert denied.execute(write("a.md", "a\n")) == "error: operator denied the tool action"
    approved = approving_workspace(tmp_path)
    assert approved.execute(write("b.md", "b\n")) == "wrote b.md"
    third = approving_workspace(tmp_path)
    assert third.execute(write("c.md", "c\n")) == "wrote c.md"

    ids = [record["tool_call_id"] for record in lines_of(log_path(tmp_path))]
    assert ids == ["call-2", "call-3"]


def test_the_content_store_keeps_before_after_and_output_once(tmp_path: Path) -> None:
    log = edit_and_run(tmp_path)
    objects = log.parent / "objects"
    for content in (b"value = 1\n", b"value = 2\n", b"hello\n"):
        assert (objects / sha(content)).read_bytes() == content
    workspace = approving_workspace(tmp_path)
    workspace.execute(run_hello())
    assert len(list(objects.iterdir())) == 3


def test_gc_removes_only_objects_no_receipt_names(tmp_path: Path, capsys: object) -> None:
    log = edit_and_run(tmp_path)
    objects = log.parent / "objects"
    stray = objects / sha(b"stray")
    stray.write_bytes(b"stray")

    assert main(["receipts", "gc", str(log)]) == 0
    assert not stray.exists() and len(list(objects.iterdir())) == 3


def test_receipts_diff_prints_the_applied_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = edit_and_run(tmp_path)
    assert main(["receipts", "diff", str(log), "call-1"]) == 0
    out = capsys.readouterr().out
    assert "-value = 1\n+value = 2\n" in out and "--- a/app.py" in out


def test_receipts_show_prints_argv_and_with_output_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = edit_and_run(tmp_path)
    assert main(["receipts", "show", "--output", str(log)]) == 0
    out = capsys.readouterr().out
    assert "run_command" in out and repr(list(HELLO)) in out
    assert "    hello\n" in out and "run run-a" in out


def test_verify_with_root_lists_drift_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = edit_and_run(tmp_path)
    assert main(["receipts", "verify", str(log), "--root", str(tmp_path)]) == 0
    (tmp_path / "app.py").write_text("value = 3\n")
    assert main(["receipts", "verify", str(log), "--root", str(tmp_path)]) == 1
    assert "drift: app.py changed after call-1" in capsys.readouterr().out


def test_a_broken_chain_leaves_drift_unchecked_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = edit_and_run(tmp_path)
    (tmp_path / "app.py").write_text("value = 3\n")
    log.write_text(log.read_text().replace('"edited app.py"', '"edited app.py!"', 1))

    report = verify_receipt_log(log, root=tmp_path)
    assert not report.ok and not report.drift_checked and report.drift == ()
    assert main(["receipts", "verify", str(log), "--root", str(tmp_path)]) == 1
    assert "drift: not checked" in capsys.readouterr().out


def test_the_agent_cannot_touch_the_head_or_the_content_store(tmp_path: Path) -> None:
    log = edit_and_run(tmp_path)
    workspace = approving_workspace(tmp_path)
    relative = log.parent.relative_to(tmp_path)
    for path in (head_path(log).name, f"objects/{sha(b'hello' + bytes([10]))}"):
        result = workspace.execute(write(f"{relative}/{path}", "forged"))
        assert result == "error: path is not accessible"
    assert verify_receipt_log(log).ok


def test_a_line_carries_the_chain_over_the_whole_line(tmp_path: Path) -> None:
    log = edit_and_run(tmp_path)
    assert all(CHAIN_KEY in record for record in lines_of(log))
    assert len(ReceiptStore(log)) == 2

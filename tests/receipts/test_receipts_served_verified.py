"""Opening with the head checks only the lines after it; whatever tells a person "verified"
has read every line, and what opened from the head says what it checked."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, write

from counterfoil import ReceiptStore
from counterfoil.cli.main import main
from counterfoil.receipts import CHAIN_KEY, RECEIPT_FIELDS, canonical_json
from counterfoil.receipts.content import load_object_prefix, store_object
from counterfoil.receipts.verify import read_receipt_log


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def edited_in_the_middle(tmp_path: Path) -> Path:
    """Three receipts; the second's result changed, same length, its id recomputed."""
    workspace = approving_workspace(tmp_path)
    for name in ("a", "b", "c"):
        workspace.execute(write(f"{name}.md", f"{name}\n"))
    log = log_path(tmp_path)
    lines = log.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["result"] = "wrote x.md"
    record["receipt_id"] = hashlib.sha256(
        canonical_json({key: record[key] for key in RECEIPT_FIELDS}).encode()
    ).hexdigest()
    edited = json.dumps(record, separators=(",", ":")) + "\n"
    assert len(edited) == len(lines[1]) and CHAIN_KEY in record
    log.write_text(lines[0] + edited + lines[2])
    return log


def test_receipts_show_does_not_call_a_log_edited_in_the_middle_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = edited_in_the_middle(tmp_path)
    assert len(ReceiptStore(log)) == 3  # opening from the head is fast and does not see it

    status = main(["receipts", "show", str(log)])

    out = capsys.readouterr().out
    assert status == 1
    assert "verified" not in out and "error: line 2:" in out
    assert "wrote x.md" not in out


def test_reading_a_log_hands_out_only_the_receipts_before_the_first_bad_line(
    tmp_path: Path,
) -> None:
    log = edited_in_the_middle(tmp_path)
    shown: list[str] = []

    report = read_receipt_log(log, lambda receipt: shown.append(receipt.tool_call_id))

    assert not report.ok and report.error and report.error.startswith("line 2:")
    assert shown == ["call-1"]


def test_a_store_opened_from_its_head_says_it_checked_only_the_lines_after_it(
    tmp_path: Path,
) -> None:
    log = edited_in_the_middle(tmp_path)

    checked = ReceiptStore(log).checked

    assert checked.startswith("the 0 lines after the head record checked, the 3 before it not")
    assert f"counterfoil receipts verify {log}" in checked


def test_a_cli_run_says_what_of_the_log_it_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited_in_the_middle(tmp_path)
    script = tmp_path / "script.jsonl"
    script.write_text('{"final": "done"}\n')
    capsys.readouterr()

    main(["agent", "x", "--root", str(tmp_path), "--model", f"scripted:{script}"])

    out = capsys.readouterr().out
    assert "log: the 0 lines after the head record checked, the 3 before it not" in out


def test_a_run_that_wrote_no_receipt_says_there_is_no_log_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('{"final": "done"}\n')
    project = tmp_path / "project"
    project.mkdir()

    main(["agent", "x", "--root", str(project), "--model", f"scripted:{script}"])

    out = capsys.readouterr().out
    log = project / ".counterfoil" / "receipts.jsonl"
    assert f"log: no receipt log yet at {log} (it is written with the first receipt)" in out
    assert "of the log checked" not in out


def test_an_objects_first_bytes_are_read_without_holding_the_rest(tmp_path: Path) -> None:
    folder = log_path(tmp_path).parent
    data = bytes(range(256)) * (64 * 1024)  # 16 MiB
    digest = store_object(folder, data)
    tracemalloc.start()
    try:
        found = load_object_prefix(folder, digest, 1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert found is not None
    prefix, size = found
    assert prefix == data[: 1024 * 1024] and size == len(data)
    assert peak < 4 * 1024 * 1024


def test_an_object_whose_bytes_changed_is_not_served(tmp_path: Path) -> None:
    folder = log_path(tmp_path).parent
    digest = store_object(folder, b"original bytes")
    stored = folder / "objects" / digest
    stored.chmod(0o600)
    stored.write_bytes(b"changed bytes!")

    assert load_object_prefix(folder, digest, 4) is None

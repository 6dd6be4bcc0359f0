"""Receipts: ids bound to contents, a hash chain across lines, torn lines, locked appends."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest
from tests.support.receipts import receipt

from counterfoil import AgentError, EffectReceipt, ReceiptStore, verify_receipt_log
from counterfoil.receipts import CHAIN_KEY


def write_log(path: Path, count: int) -> list[str]:
    store = ReceiptStore(path)
    for number in range(1, count + 1):
        store.put(receipt(number))
    return path.read_text().splitlines()


def test_receipt_id_is_the_digest_of_the_sorted_compact_payload() -> None:
    item = receipt(1)
    payload = {
        "tool_call_id": "call-1",
        "tool": "edit_file",
        "arguments": {"path": "app.py", "old": "1", "new": "1"},
        "exit_state": "ok",
        "result": "edited app.py",
        "changed_artifacts": ["app.py"],
    }
    expected = hashlib.sha256(
        json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()

    assert item.receipt_id == expected
    assert item.to_dict() == {"receipt_id": expected, **payload}
    assert EffectReceipt.from_dict(item.to_dict()) == item


def test_from_dict_refuses_a_missing_or_extra_key() -> None:
    data = receipt(1).to_dict()
    with pytest.raises(AgentError, match="receipt is malformed"):
        EffectReceipt.from_dict({k: v for k, v in data.items() if k != "result"})
    with pytest.raises(AgentError, match="receipt is malformed"):
        EffectReceipt.from_dict({**data, "extra": 1})


def test_from_dict_refuses_a_changed_field() -> None:
    data = {**receipt(1).to_dict(), "result": "edited other.py"}
    with pytest.raises(AgentError, match="receipt digest does not match its contents"):
        EffectReceipt.from_dict(data)


def test_put_is_idempotent_and_refuses_a_different_receipt_for_the_same_id() -> None:
    store = ReceiptStore()
    assert store.put(receipt(1)) == receipt(1)
    assert store.put(receipt(1)) == receipt(1)
    assert len(store) == 1
    with pytest.raises(AgentError, match="tool call id already has a different receipt"):
        store.put(receipt(1, result="edited app.py again"))
    assert store.get("call-1") == receipt(1)
    assert store.get("call-9") is None


def test_log_lines_are_to_dict_plus_a_chain_link_and_reload_in_order(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    lines = write_log(log, 3)

    first = json.loads(lines[0])
    assert set(first) == {"receipt_id", *receipt(1).payload(), CHAIN_KEY}
    assert ReceiptStore(log).receipts() == (receipt(1), receipt(2), receipt(3))
    assert verify_receipt_log(log).ok and verify_receipt_log(log).count == 3


def test_an_edited_line_is_detected_with_its_line_number(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    lines = write_log(log, 3)
    lines[1] = lines[1].replace("edited app.py", "edited evil.py")
    log.write_text("\n".join(lines) + "\n")

    with pytest.raises(AgentError, match="line 2: receipt digest does not match its contents"):
        ReceiptStore(log)
    report = verify_receipt_log(log)
    assert (report.ok, report.line, report.count) == (False, 2, 1)


def test_a_deleted_line_is_detected(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    lines = write_log(log, 3)
    log.write_text("\n".join([lines[0], lines[2]]) + "\n")

    report = verify_receipt_log(log)
    assert not report.ok and report.line == 2
    assert "a line was deleted, inserted or reordered" in (report.error or "")


def test_a_reordered_log_is_detected(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    lines = write_log(log, 3)
    log.write_text("\n".join([lines[1], lines[0], lines[2]]) + "\n")

    assert verify_receipt_log(log).line == 1


def test_an_inserted_valid_line_from_another_log_is_detected(tmp_path: Path) -> None:
    log, other = tmp_path / "receipts.jsonl", tmp_path / "other.jsonl"
    lines = write_log(log, 2)
    foreign = ReceiptStore(other)
    foreign.put(receipt(7))
    log.write_text("\n".join([lines[0], other.read_text().strip(), lines[1]]) + "\n")

    assert verify_receipt_log(log).line == 2


def test_a_torn_last_line_is_reported_as_an_interrupted_append(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    lines = write_log(log, 2)
    log.write_text(lines[0] + "\n" + lines[1][:40])

    report = verify_receipt_log(log)
    assert report.line == 2 and report.count == 1
    assert "the last line is incomplete" in (report.error or "")
    with pytest.raises(AgentError, match="line 2: the last line is incomplete"):
        ReceiptStore(log)


def test_a_broken_middle_line_is_malformed_not_torn(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    lines = write_log(log, 2)
    log.write_text(lines[0][:40] + "\n" + lines[1] + "\n")

    assert verify_receipt_log(log).error == "line 1: receipt is malformed (not a JSON object)"


def test_a_course_format_log_loads_and_later_chained_lines_cover_it(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    plain = [json.dumps(receipt(n).to_dict()) for n in (1, 2)]
    log.write_text("\n".join(plain) + "\n")

    store = ReceiptStore(log)
    assert store.receipts() == (receipt(1), receipt(2))
    store.put(receipt(3))
    assert verify_receipt_log(log).count == 3

    log.write_text("\n".join([plain[1], plain[0], log.read_text().splitlines()[2]]) + "\n")
    assert verify_receipt_log(log).line == 3


def test_a_plain_line_after_a_chained_line_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    write_log(log, 1)
    with log.open("a") as handle:
        handle.write(json.dumps(receipt(2).to_dict()) + "\n")

    assert "chain link is missing" in (verify_receipt_log(log).error or "")


def test_an_unreadable_log_cannot_be_loaded(tmp_path: Path) -> None:
    (tmp_path / "receipts.jsonl").mkdir()
    with pytest.raises(AgentError, match="could not load receipt log"):
        ReceiptStore(tmp_path / "receipts.jsonl")


def test_a_log_without_a_final_newline_gets_one_before_the_next_append(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    log.write_text(json.dumps(receipt(1).to_dict()))
    ReceiptStore(log).put(receipt(2))

    assert verify_receipt_log(log).count == 2


def test_subscribers_hear_each_new_receipt_once(tmp_path: Path) -> None:
    store = ReceiptStore(tmp_path / "receipts.jsonl")
    heard: list[str] = []
    unsubscribe = store.subscribe(lambda item: heard.append(item.tool_call_id))
    store.put(receipt(1))
    store.put(receipt(1))
    unsubscribe()
    store.put(receipt(2))

    assert heard == ["call-1"]


def _append_many(path: str, first: int, count: int) -> None:
    store = ReceiptStore(Path(path))
    for number in range(first, first + count):
        store.put(receipt(number))


def test_two_processes_appending_at_once_keep_one_valid_chain(tmp_path: Path) -> None:
    log = tmp_path / "receipts.jsonl"
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_append_many, args=(str(log), start, 150)) for start in (1, 1001)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0

    report = verify_receipt_log(log)
    assert report.ok, report.error
    assert report.count == 300


def test_a_file_where_the_logs_folder_must_be_is_said_in_a_sentence(tmp_path: Path) -> None:
    from counterfoil.receipts.errors import ReceiptLogError
    from counterfoil.receipts.logfile import make_log_folder

    (tmp_path / ".counterfoil").write_text("not a folder")

    with pytest.raises(ReceiptLogError) as raised:
        make_log_folder(tmp_path / ".counterfoil" / "receipts.jsonl")

    assert str(raised.value) == (
        f"{tmp_path / '.counterfoil'} is a file where the receipt log needs a folder: move the "
        "file away, or set the receipt log elsewhere (receiptLog)"
    )
    assert "Errno" not in str(raised.value)

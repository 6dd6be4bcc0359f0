"""Integrity beyond the chain: the head record catches a shortened log, a chained log never
turns legacy, hostile lines are line errors, and opening trusts only a matching head."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, receipt, write
from tests.support.workspaces import make_workspace

from counterfoil import AgentError, ReceiptStore, verify_receipt_log
from counterfoil.actions import parse_action
from counterfoil.loop import AgentLimits, run_agent
from counterfoil.receipts import CHAIN_KEY
from counterfoil.receipts.chain import MAX_LINE_BYTES
from counterfoil.receipts.head import head_path


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def written_log(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    workspace = approving_workspace(tmp_path)
    for number in range(count):
        assert workspace.execute(write(f"f{number}.md", f"{number}\n")).startswith("wrote")
    log = log_path(tmp_path)
    return log, log.read_text().splitlines(keepends=True)


def test_removing_the_last_line_is_reported_via_the_head(tmp_path: Path) -> None:
    log, lines = written_log(tmp_path, 4)
    log.write_text("".join(lines[:-1]))

    report = verify_receipt_log(log)
    assert not report.ok and "removed from its end" in (report.error or "")
    with pytest.raises(AgentError, match="removed from its end"):
        ReceiptStore(log)


def test_removing_the_last_three_lines_is_reported_via_the_head(tmp_path: Path) -> None:
    log, lines = written_log(tmp_path, 5)
    log.write_text("".join(lines[:-3]))

    report = verify_receipt_log(log)
    assert not report.ok and "head records 5, the log holds 2" in (report.error or "")


def test_emptying_or_deleting_the_log_is_reported_via_the_head(tmp_path: Path) -> None:
    log, _ = written_log(tmp_path, 2)
    log.write_text("")
    assert "removed from its end" in (verify_receipt_log(log).error or "")
    log.unlink()
    assert "the receipt log is missing" in (verify_receipt_log(log).error or "")
    with pytest.raises(AgentError, match="the receipt log is missing"):
        ReceiptStore(log)


def test_removing_the_head_of_a_log_with_evidence_is_reported(tmp_path: Path) -> None:
    log, _ = written_log(tmp_path, 2)
    head_path(log).unlink()

    assert "head record beside the log is missing" in (verify_receipt_log(log).error or "")


def test_stripping_every_chain_link_from_a_chained_log_fails(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    store = ReceiptStore(log)
    for number in (1, 2, 3):
        store.put(receipt(number))
    stripped = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        del record[CHAIN_KEY]
        stripped.append(json.dumps(record))
    log.write_text("\n".join(stripped[:2]) + "\n")

    report = verify_receipt_log(log)
    assert not report.ok


def test_stripping_the_chain_from_lines_with_evidence_fails_even_without_a_head(
    tmp_path: Path,
) -> None:
    log, lines = written_log(tmp_path, 2)
    head_path(log).unlink()
    records = [json.loads(line) for line in lines]
    for record in records:
        del record[CHAIN_KEY]
    log.write_text("".join(json.dumps(record) + "\n" for record in records))

    assert "chain link is missing from a line with evidence" in (
        verify_receipt_log(log).error or ""
    )


@pytest.mark.parametrize(
    "hostile",
    ["[" * 100_000 + "]" * 100_000, '{"a":' + "9" * 5_000 + "}", "x" * (MAX_LINE_BYTES + 10)],
    ids=["deep nesting", "huge integer", "huge line"],
)
def test_hostile_lines_are_line_errors_not_exceptions(tmp_path: Path, hostile: str) -> None:
    log = log_path(tmp_path)
    ReceiptStore(log).put(receipt(1))
    with log.open("a") as handle:
        handle.write(hostile + "\n")

    report = verify_receipt_log(log)
    assert (report.ok, report.line, report.count) == (False, 2, 1)
    with pytest.raises(AgentError, match="line 2: "):
        ReceiptStore(log)


@pytest.mark.parametrize(
    "response",
    ['{"final":' + "[" * 100_000 + "]" * 100_000 + "}", '{"final":' + "9" * 5000 + "}"],
    ids=["deep nesting", "huge integer"],
)
def test_a_hostile_model_response_is_a_parse_error_observation(
    tmp_path: Path, response: str
) -> None:
    with pytest.raises(AgentError, match="response is not valid JSON"):
        parse_action(response)
    workspace = make_workspace(tmp_path)
    answers = iter([response, '{"final":"done"}'])
    limits = AgentLimits(max_context_chars=1_000_000)
    run = run_agent("goal", lambda _: next(answers), workspace, limits)
    assert run.completed and run.events[0].result.startswith("error: response is not valid JSON")


def test_a_course_format_log_without_a_head_loads_and_verifies(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    log.write_text("".join(json.dumps(receipt(n).to_dict()) + "\n" for n in (1, 2)))

    assert verify_receipt_log(log).ok
    store = ReceiptStore(log)
    assert store.receipts() == (receipt(1), receipt(2))
    workspace = make_workspace(tmp_path, store=store, answer=True, allow_writes=True)
    assert workspace.execute(write("new.md", "n\n")) == "wrote new.md"
    assert store.get("call-3") is not None and verify_receipt_log(log).count == 3


def test_a_first_version_chained_log_without_a_head_loads_and_verifies(tmp_path: Path) -> None:
    log = log_path(tmp_path)
    store = ReceiptStore(log)
    store.put(receipt(1))
    store.put(receipt(2))
    head_path(log).unlink()

    assert verify_receipt_log(log).ok and verify_receipt_log(log).count == 2
    assert ReceiptStore(log).receipts() == (receipt(1), receipt(2))


def test_opening_trusts_a_matching_head_and_full_verify_still_reads_every_line(
    tmp_path: Path,
) -> None:
    log, lines = written_log(tmp_path, 3)
    edited = lines[0].replace('"wrote f0.md"', '"wrote g0.md"')
    log.write_text(edited + "".join(lines[1:]))

    assert len(ReceiptStore(log)) == 3
    assert verify_receipt_log(log).line == 1


def test_a_head_that_does_not_match_the_log_end_is_not_trusted(tmp_path: Path) -> None:
    log, lines = written_log(tmp_path, 3)
    edited = lines[2].replace('"wrote f2.md"', '"wrote g2.md"')
    log.write_text("".join(lines[:2]) + edited)

    with pytest.raises(AgentError, match="line 3: receipt digest does not match"):
        ReceiptStore(log)

"""The head closes the log's end: a log with evidence and no head does not open, a signed
log's head is signed with the same key, and a signed log takes no effect it cannot sign."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, write

from counterfoil import ReceiptStore, verify_receipt_log
from counterfoil.cli.main import main
from counterfoil.errors import AgentError
from counterfoil.receipt_fields import ReceiptEvidence
from counterfoil.receipts import CHAIN_KEY, EffectReceipt
from counterfoil.receipts import store as store_module
from counterfoil.receipts.head import head_path
from counterfoil.receipts.signing import PUBLIC_KEY_FILE


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))
    return folder


def written(tmp_path: Path, count: int) -> Path:
    workspace = approving_workspace(tmp_path)
    for number in range(count):
        assert workspace.execute(write(f"f{number}.md", f"{number}\n")) == f"wrote f{number}.md"
    return log_path(tmp_path)


def cut_last_line(log: Path) -> list[str]:
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]))
    return lines[:-1]


def receipt_with_evidence() -> EffectReceipt:
    return EffectReceipt(
        "call-1",
        "write_file",
        {"path": "a.md", "content": "a"},
        "ok",
        "wrote a.md",
        ("a.md",),
        ReceiptEvidence(run_id="run-1"),
    )


def public_key(config: Path) -> str:
    return (config / PUBLIC_KEY_FILE).read_text().strip()


def test_a_log_with_evidence_and_no_head_is_refused_on_open(tmp_path: Path, config: Path) -> None:
    log = written(tmp_path, 2)
    cut_last_line(log)
    head_path(log).unlink()

    with pytest.raises(AgentError, match="head record beside the log is missing"):
        ReceiptStore(log)
    assert not verify_receipt_log(log).ok


def test_a_first_append_interrupted_before_its_head_is_rewritten_still_opens(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = log_path(tmp_path)
    writes: list[int] = []
    real_write_head = store_module.write_head

    def write_head_then_crash(path: Path, head: object) -> None:
        writes.append(1)
        if len(writes) > 1:
            raise OSError(5, "power lost")
        real_write_head(path, head)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "write_head", write_head_then_crash)
    with pytest.raises(AgentError):
        ReceiptStore(log).put(receipt_with_evidence())
    monkeypatch.undo()

    assert len(ReceiptStore(log)) == 1
    assert verify_receipt_log(log).ok


def test_a_signed_logs_head_is_signed_with_the_same_key(tmp_path: Path, config: Path) -> None:
    assert main(["keys", "init"]) == 0
    log = written(tmp_path, 1)

    head = json.loads(head_path(log).read_text())
    assert head["signed_by"] == public_key(config) and head["signature"]
    assert verify_receipt_log(log, public_key=public_key(config)).ok


def test_a_signed_log_cut_with_its_head_recomputed_fails_with_the_public_key(
    tmp_path: Path, config: Path
) -> None:
    assert main(["keys", "init"]) == 0
    log = written(tmp_path, 3)
    kept = cut_last_line(log)
    head = json.loads(head_path(log).read_text())
    head.update(count=2, lines=2, length=log.stat().st_size, link=json.loads(kept[-1])[CHAIN_KEY])
    head_path(log).write_text(json.dumps(head))

    report = verify_receipt_log(log, public_key=public_key(config))
    assert not report.ok and "head record's signature does not verify" in (report.error or "")


def test_a_signed_log_cut_with_an_unsigned_head_fails_even_without_the_key(
    tmp_path: Path, config: Path
) -> None:
    assert main(["keys", "init"]) == 0
    log = written(tmp_path, 3)
    kept = cut_last_line(log)
    head = json.loads(head_path(log).read_text())
    head.update(
        count=2,
        lines=2,
        length=log.stat().st_size,
        link=json.loads(kept[-1])[CHAIN_KEY],
        signature=None,
    )
    head_path(log).write_text(json.dumps(head))

    assert "head record of a signed log is not signed" in (verify_receipt_log(log).error or "")
    with pytest.raises(AgentError, match="head record of a signed log is not signed"):
        ReceiptStore(log)


def test_a_signed_log_refuses_an_effect_when_no_signing_key_is_here(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["keys", "init"]) == 0
    log = written(tmp_path, 1)
    key = public_key(config)
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "elsewhere"))
    before = log.read_bytes()

    observation = approving_workspace(tmp_path).execute(write("late.md", "late\n"))

    assert observation.startswith("error: the receipt log is signed with ed25519:")
    assert "no signing key" in observation and "nothing was done" in observation
    assert not (tmp_path / "late.md").exists()
    assert log.read_bytes() == before
    assert verify_receipt_log(log, public_key=key).ok


def test_a_cli_run_on_a_signed_log_without_its_key_stops_before_it_starts(
    tmp_path: Path,
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["keys", "init"]) == 0
    written(tmp_path, 1)
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "elsewhere"))
    script = tmp_path / "script.jsonl"
    script.write_text('{"final": "done"}\n')
    capsys.readouterr()

    status = main(["agent", "x", "--root", str(tmp_path), "--model", f"scripted:{script}"])

    out = capsys.readouterr().out
    assert status != 0 and "error: the receipt log is signed with" in out

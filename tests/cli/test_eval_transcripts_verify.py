"""The receipt log `eval --transcripts` keeps verifies with `counterfoil receipts verify`: it
is kept with its head, and with its signatures where the run signed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from counterfoil.cli.main import main
from counterfoil.receipts.signing import load_signer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "evals"
SOLVE = f"scripted:{FIXTURES / 'scripts' / 'solve'}"


def cli(*arguments: str) -> tuple[int, str]:
    stdout = io.StringIO()
    status = main(list(arguments), stdout=stdout)
    return status, stdout.getvalue()


def kept_log(tmp_path: Path) -> Path:
    folder = tmp_path / "transcripts"
    package = str(FIXTURES / "localized-constant")
    cli("eval", package, "--model", SOLVE, "--yes", "--transcripts", str(folder))
    return folder / "1-localized-constant-1" / "receipts.jsonl"


def test_the_kept_receipt_log_verifies(tmp_path: Path) -> None:
    log = kept_log(tmp_path)

    status, output = cli("receipts", "verify", str(log))

    assert status == 0, output
    assert output.startswith("ok: ")


def test_a_signed_runs_kept_log_verifies_with_its_signatures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    assert cli("keys", "init")[0] == 0
    signer = load_signer()
    assert signer is not None
    public_key = tmp_path / "key.pub"
    public_key.write_text(signer.public_key)
    log = kept_log(tmp_path)

    status, output = cli("receipts", "verify", str(log), "--public-key", str(public_key))

    head = json.loads(log.with_name(log.name + ".head").read_text())
    assert head["signed_by"] == signer.public_key and head["signature"]
    assert status == 0, output
    assert output.endswith(", signatures checked\n")

"""Signed logs: every line signed by the user's key, checked offline with the public key."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, log_path, write

from counterfoil import ReceiptStore, verify_receipt_log
from counterfoil.cli.main import main
from counterfoil.receipt_fields import ReceiptEvidence
from counterfoil.receipts import CHAIN_KEY, RECEIPT_FIELDS, EffectReceipt
from counterfoil.receipts.record import PUBLIC_KEY_KEY, SIGNATURE_KEY, encode_line
from counterfoil.receipts.signing import KEY_FILE, PUBLIC_KEY_FILE


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(folder))
    return folder


def signed_log(tmp_path: Path, config: Path, count: int = 2) -> Path:
    assert main(["keys", "init"]) == 0
    workspace = approving_workspace(tmp_path)
    for number in range(count):
        workspace.execute(write(f"f{number}.md", f"{number}\n"))
    return log_path(tmp_path)


def test_keys_init_makes_a_private_key_only_its_owner_can_read(
    tmp_path: Path, config: Path
) -> None:
    assert main(["keys", "init"]) == 0
    assert stat.S_IMODE((config / KEY_FILE).stat().st_mode) == 0o600
    assert (config / PUBLIC_KEY_FILE).read_text().startswith("ed25519:")
    assert main(["keys", "init"]) == 1


def test_with_a_key_every_line_is_signed_and_verifies_with_the_public_key(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = signed_log(tmp_path, config)
    public = (config / PUBLIC_KEY_FILE).read_text().strip()
    for line in log.read_text().splitlines():
        record = json.loads(line)
        assert record[PUBLIC_KEY_KEY] == public and record[SIGNATURE_KEY]
    assert (
        main(["receipts", "verify", str(log), "--public-key", str(config / PUBLIC_KEY_FILE)]) == 0
    )
    assert "signatures checked" in capsys.readouterr().out


def test_a_forged_line_with_a_recomputed_chain_fails_with_the_public_key(
    tmp_path: Path, config: Path
) -> None:
    log = signed_log(tmp_path, config)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    original = records[-1]
    evidence = {
        key: value
        for key, value in original.items()
        if key not in ("receipt_id", CHAIN_KEY, SIGNATURE_KEY, PUBLIC_KEY_KEY, *RECEIPT_FIELDS)
    }
    receipt = EffectReceipt(
        original["tool_call_id"],
        original["tool"],
        original["arguments"],
        original["exit_state"],
        "wrote nothing",
        tuple(original["changed_artifacts"]),
        ReceiptEvidence.from_record(evidence),
    )

    class ReusedSignature:
        """A forger's signer: it names the real key and copies an old signature."""

        public_key = original[PUBLIC_KEY_KEY]

        def sign(self, link: str) -> str:
            return str(original[SIGNATURE_KEY])

    encoded, link = encode_line(receipt, records[-2][CHAIN_KEY], ReusedSignature())
    public_key = ReusedSignature.public_key
    kept = log.read_bytes().splitlines(keepends=True)[:-1]
    log.write_bytes(b"".join(kept) + encoded + b"\n")
    head = log.with_name(log.name + ".head")
    head_data = json.loads(head.read_text())
    head_data["link"], head_data["length"] = link, log.stat().st_size
    head.write_text(json.dumps(head_data))

    assert verify_receipt_log(log).ok  # the chain alone cannot tell
    report = verify_receipt_log(log, public_key=public_key)
    assert not report.ok and "signature does not verify" in (report.error or "")


def test_a_different_public_key_fails(tmp_path: Path, config: Path) -> None:
    log = signed_log(tmp_path, config)
    other = tmp_path / "other"
    from counterfoil.receipts.signing import init_key

    _, other_public = init_key(other)
    report = verify_receipt_log(log, public_key=other_public)
    assert not report.ok and "signed by a different key" in (report.error or "")


def test_an_unsigned_line_in_a_signed_log_fails(tmp_path: Path, config: Path) -> None:
    log = signed_log(tmp_path, config)
    last_link = json.loads(log.read_text().splitlines()[-1])[CHAIN_KEY]
    unsigned = EffectReceipt("call-9", "write_file", {"path": "x", "content": ""}, "ok", "wrote x")
    with log.open("ab") as handle:
        handle.write(encode_line(unsigned, last_link)[0] + b"\n")
    report = verify_receipt_log(log)
    assert not report.ok and "unsigned in a signed log" in (report.error or "")


def test_an_unsigned_log_verifies_without_a_key(tmp_path: Path, config: Path) -> None:
    workspace = approving_workspace(tmp_path)
    workspace.execute(write("a.md", "a\n"))
    log = log_path(tmp_path)
    assert SIGNATURE_KEY not in json.loads(log.read_text())
    assert verify_receipt_log(log).ok
    assert len(ReceiptStore(log)) == 1

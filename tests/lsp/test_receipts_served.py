"""The daemon's receipts request serves only what verified, reading every line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction
from counterfoil.lsp.session import Session
from counterfoil.protocol import wire
from counterfoil.receipts import RECEIPT_FIELDS, canonical_json

from .conftest import RecordingChannel


def test_a_receipt_edited_in_the_middle_is_reported_not_served_as_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))
    session = Session(RecordingChannel())  # type: ignore[arg-type]
    session.root = tmp_path
    log = session.queries.receipt_log()
    assert log is not None
    log.parent.mkdir()
    workspace = make_workspace(tmp_path, store=ReceiptStore(log), answer=True, allow_writes=True)
    for name in ("a", "b", "c"):
        workspace.execute(ToolAction("write_file", {"path": f"{name}.md", "content": name}))
    lines = log.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["result"] = "wrote x.md"
    record["receipt_id"] = hashlib.sha256(
        canonical_json({key: record[key] for key in RECEIPT_FIELDS}).encode()
    ).hexdigest()
    log.write_text(lines[0] + json.dumps(record, separators=(",", ":")) + "\n" + lines[2])

    listed = wire(session.queries.receipts())

    assert listed["error"] is not None and listed["error"].startswith("line 2:")
    assert [receipt["tool_call_id"] for receipt in listed["receipts"]] == ["call-1"]

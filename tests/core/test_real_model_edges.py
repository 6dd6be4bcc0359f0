"""Edges a real model met first: the receipt folder listed to it, a log reported as checked
when no log exists."""

from __future__ import annotations

import io
import json
from pathlib import Path

from counterfoil import ToolPolicy, Workspace, parse_action
from counterfoil.cli.main import main
from counterfoil.receipts import ReceiptStore


def test_list_files_does_not_list_the_receipt_folder(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n", encoding="utf-8")
    (root / ".counterfoil").mkdir()
    store = ReceiptStore(root / ".counterfoil" / "receipts.jsonl")
    workspace = Workspace(
        ToolPolicy(root, allow_writes=True), receipt_store=store, confirm_proposal=lambda _: True
    )
    workspace.execute(parse_action('{"tool":"write_file","path":"b.txt","content":"b"}', None))
    assert (root / ".counterfoil" / "receipts.jsonl").is_file()
    listing = workspace.execute(parse_action('{"tool":"list_files","path":"."}', None))
    assert ".counterfoil" not in listing
    assert "file app.py" in listing and "file b.txt" in listing


def test_a_run_without_receipts_does_not_claim_a_log_was_checked(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    script = tmp_path / "final.jsonl"
    script.write_text(json.dumps({"final": "nothing to do"}) + "\n", encoding="utf-8")
    output = io.StringIO()
    main(
        ["agent", "look", "--root", str(root), "--model", f"scripted:{script}"],
        stdin=io.StringIO(""),
        stdout=output,
    )
    text = output.getvalue()
    assert "log: none yet (no effect was receipted)" in text
    assert "lines of the log checked" not in text


def test_a_write_of_the_files_own_bytes_asks_nothing_and_writes_no_receipt(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n", encoding="utf-8")
    store = ReceiptStore(tmp_path / "receipts.jsonl")
    asked: list[object] = []
    workspace = Workspace(
        ToolPolicy(root, allow_writes=True),
        receipt_store=store,
        confirm_proposal=lambda proposal: asked.append(proposal) or True,
    )
    workspace.execute(parse_action('{"tool":"read_file","path":"app.py"}', None))
    result = workspace.execute(
        parse_action('{"tool":"write_file","path":"app.py","content":"x = 1\\n"}', None)
    )
    assert result == "error: the file already holds exactly these bytes: nothing to change"
    assert not asked
    assert len(store) == 0


def test_prose_around_an_action_is_refused_with_the_expected_form_restated() -> None:
    import pytest

    from counterfoil.errors import AgentError

    with pytest.raises(AgentError) as raised:
        parse_action('Sure! Here it is: {"tool":"list_files","path":"."}', None)
    message = str(raised.value)
    assert message.startswith("response is not valid JSON (Expecting value): reply with exactly")
    assert '{"final":"what you did"}' in message and "\n" not in message

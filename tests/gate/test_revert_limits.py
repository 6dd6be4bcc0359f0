"""A revert reads the file with the limit its edit used, so a big file edited by lines can be
reverted."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace

from counterfoil import ToolAction


@pytest.fixture(autouse=True)
def no_signing_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COUNTERFOIL_CONFIG_DIR", str(tmp_path / "config"))


def test_a_file_over_the_read_limit_edited_by_lines_can_be_reverted(tmp_path: Path) -> None:
    original = "".join(f"line {number}\n" for number in range(20_000))  # ~190 KB
    (tmp_path / "big.txt").write_text(original)
    workspace = approving_workspace(tmp_path)
    assert len(original) > workspace.policy.max_file_bytes
    workspace.read_file("big.txt", 1, 10)
    edit = ToolAction("edit_file", {"path": "big.txt", "old": "line 5\n", "new": "line five\n"})
    assert workspace.execute(edit) == "edited big.txt"

    assert workspace.revert("call-1") == "restored big.txt (reverts call-1)"
    assert (tmp_path / "big.txt").read_text() == original

"""A new file in new folders, as the product does it: the approval names the folders, the
receipt lists them, and a revert removes them again when they are still empty."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.terminal import run_cli

LOG = ".counterfoil/receipts.jsonl"


def write_in_new_folders(root: Path, tmp_path: Path) -> tuple[int, str]:
    script = tmp_path / "script.jsonl"
    script.write_text(
        json.dumps({"tool": "write_file", "path": "src/pkg/mod.py", "content": "x = 1\n"})
        + "\n"
        + json.dumps({"final": "wrote src/pkg/mod.py"})
        + "\n"
    )
    return run_cli(
        ["agent", "add a module", "--root", str(root), "--allow-writes"]
        + ["--model", f"scripted:{script}"],
        "y\n",
    )


def receipts(root: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (root / LOG).read_text().splitlines()]


def test_the_approval_shows_the_folders_and_the_receipt_lists_them(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    status, output = write_in_new_folders(root, tmp_path)
    assert status == 1, output  # written, not validated
    assert "creates the folders: src/, src/pkg/" in output
    assert (root / "src/pkg/mod.py").read_text() == "x = 1\n"
    assert receipts(root)[0]["created_folders"] == ["src", "src/pkg"]


def test_revert_removes_the_file_and_its_new_folders(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    write_in_new_folders(root, tmp_path)
    status, output = run_cli(["revert", "call-1", "--root", str(root)], "y\n")
    assert status == 0, output
    assert "removes the folders if empty: src/, src/pkg/" in output
    assert not (root / "src").exists()
    assert receipts(root)[-1]["removed_folders"] == ["src/pkg", "src"]


def test_revert_keeps_a_new_folder_the_person_has_put_files_in(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    write_in_new_folders(root, tmp_path)
    (root / "src/README.md").write_text("mine\n")
    assert run_cli(["revert", "call-1", "--root", str(root)], "y\n")[0] == 0
    assert not (root / "src/pkg").exists()
    assert (root / "src/README.md").read_text() == "mine\n"

"""Replacing files: atomic, mode-keeping, and never through a symlink swapped in during approval."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from counterfoil import ToolAction, ToolPolicy, Workspace
from counterfoil.proposals import ToolProposal


def make_workspace(root: Path, confirm) -> Workspace:  # type: ignore[no-untyped-def]
    return Workspace(ToolPolicy(root, allow_writes=True), confirm_proposal=confirm)


def test_a_parent_directory_swapped_for_a_symlink_during_approval_is_refused(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    (outside / "app.py").write_text("x = 1\n")

    def swap_parent(_proposal: ToolProposal) -> bool:
        shutil.rmtree(root / "src")
        (root / "src").symlink_to(outside)
        return True

    workspace = make_workspace(root, swap_parent)
    workspace.read_file("src/app.py")
    result = workspace.execute(ToolAction("edit_file", {"path": "src/app.py", "old": "1",
                                                        "new": "2"}))

    assert result == "error: symlinks are not accessible"
    assert (outside / "app.py").read_text() == "x = 1\n"
    assert os.listdir(outside) == ["app.py"]
    assert len(workspace.receipt_store) == 0


def test_a_target_swapped_for_a_symlink_during_approval_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("x = 1\n")

    def swap_target(_proposal: ToolProposal) -> bool:
        (root / "app.py").unlink()
        (root / "app.py").symlink_to(victim)
        return True

    workspace = make_workspace(root, swap_target)
    workspace.read_file("app.py")
    result = workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1",
                                                        "new": "2"}))

    assert result == "error: file changed since it was read"
    assert victim.read_text() == "x = 1\n"


def test_a_new_file_that_appears_during_approval_is_not_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()

    def create_it(_proposal: ToolProposal) -> bool:
        (root / "NOTES.md").write_text("written by a person\n")
        return True

    workspace = make_workspace(root, create_it)
    result = workspace.execute(ToolAction("write_file", {"path": "NOTES.md", "content": "x"}))

    assert result == "error: file changed since it was read"
    assert (root / "NOTES.md").read_text() == "written by a person\n"


def test_writing_to_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    workspace = make_workspace(tmp_path, lambda _p: True)

    result = workspace.execute(ToolAction("write_file", {"path": "pipe", "content": "x"}))

    assert result == "error: path is not a regular file"


def test_the_approved_bytes_are_exactly_the_bytes_written(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    seen: list[ToolProposal] = []
    workspace = make_workspace(tmp_path, lambda proposal: seen.append(proposal) or True)
    workspace.read_file("app.py")
    workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "22"}))

    written = (tmp_path / "app.py").read_bytes()
    assert written == b"x = 22\n"
    assert hashlib.sha256(written).hexdigest() == seen[0].proposed_sha256
    assert seen[0].base_sha256 == hashlib.sha256(b"x = 1\n").hexdigest()


def test_a_failed_replace_leaves_no_temporary_file_and_the_old_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")

    def failing_replace(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    workspace = make_workspace(tmp_path, lambda _p: True)
    workspace.read_file("app.py")
    monkeypatch.setattr(os, "replace", failing_replace)
    result = workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1",
                                                        "new": "2"}))

    assert result == "error: No space left on device"
    assert sorted(os.listdir(tmp_path)) == ["app.py"]
    assert (tmp_path / "app.py").read_text() == "x = 1\n"
    assert workspace.modified_files == ()
    assert len(workspace.receipt_store) == 0

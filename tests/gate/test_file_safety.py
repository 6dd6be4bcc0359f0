"""Replacing files: atomic, mode-keeping, and never through a symlink swapped in during approval."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ToolAction
from counterfoil.proposals import ToolProposal


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

    workspace = make_workspace(root, confirm_proposal=swap_parent, allow_writes=True)
    workspace.read_file("src/app.py")
    result = workspace.execute(
        ToolAction("edit_file", {"path": "src/app.py", "old": "1", "new": "2"})
    )

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

    workspace = make_workspace(root, confirm_proposal=swap_target, allow_writes=True)
    workspace.read_file("app.py")
    result = workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}))

    assert result == "error: file changed since it was read"
    assert victim.read_text() == "x = 1\n"


def test_a_new_file_that_appears_during_approval_is_not_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()

    def create_it(_proposal: ToolProposal) -> bool:
        (root / "NOTES.md").write_text("written by a person\n")
        return True

    workspace = make_workspace(root, confirm_proposal=create_it, allow_writes=True)
    result = workspace.execute(ToolAction("write_file", {"path": "NOTES.md", "content": "x"}))

    assert result == "error: file changed since it was read"
    assert (root / "NOTES.md").read_text() == "written by a person\n"


def test_writing_to_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)

    result = workspace.execute(ToolAction("write_file", {"path": "pipe", "content": "x"}))

    assert result == "error: path is not a regular file"


def test_the_approved_bytes_are_exactly_the_bytes_written(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    seen: list[ToolProposal] = []
    workspace = make_workspace(
        tmp_path, confirm_proposal=lambda proposal: seen.append(proposal) or True, allow_writes=True
    )
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

    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    workspace.read_file("app.py")
    monkeypatch.setattr(os, "replace", failing_replace)
    result = workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}))

    assert result == "error: No space left on device"
    assert sorted(os.listdir(tmp_path)) == ["app.py"]
    assert (tmp_path / "app.py").read_text() == "x = 1\n"
    assert workspace.modified_files == ()
    assert len(workspace.receipt_store) == 0


@pytest.mark.parametrize(("text", "old"), [("aaa\n", "aa"), ("ababab\n", "abab")])
def test_old_text_that_overlaps_itself_does_not_occur_exactly_once(
    tmp_path: Path, text: str, old: str
) -> None:
    (tmp_path / "app.py").write_text(text)
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    workspace.read_file("app.py")
    result = workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": old, "new": "b"}))

    assert result == "error: old text must occur exactly once"
    assert (tmp_path / "app.py").read_text() == text


def test_a_hard_linked_file_is_not_edited(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.py").write_text("x = 1\n")
    os.link(tmp_path / "outside.py", root / "app.py")
    workspace = make_workspace(root, answer=True, allow_writes=True)

    assert workspace.execute(ToolAction("read_file", {"path": "app.py"})) == (
        "error: file has other hard links"
    )
    result = workspace.execute(ToolAction("write_file", {"path": "app.py", "content": "y\n"}))

    assert result == "error: file has other hard links"
    assert (tmp_path / "outside.py").read_text() == "x = 1\n"


def test_a_file_hard_linked_during_approval_is_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")

    def link_it(_proposal: ToolProposal) -> bool:
        os.link(tmp_path / "app.py", tmp_path / "elsewhere.py")
        return True

    workspace = make_workspace(tmp_path, confirm_proposal=link_it, allow_writes=True)
    workspace.read_file("app.py")
    result = workspace.execute(ToolAction("edit_file", {"path": "app.py", "old": "1", "new": "2"}))

    assert result == "error: file has other hard links"
    assert (tmp_path / "app.py").read_text() == "x = 1\n"


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")


@needs_root
def test_an_edit_by_root_keeps_the_owner_group_and_setuid_bit(tmp_path: Path) -> None:
    target = tmp_path / "tool.sh"
    target.write_text("echo 1\n")
    os.chown(target, 1000, 1000)
    target.chmod(0o4755)
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    workspace.read_file("tool.sh")
    workspace.execute(ToolAction("edit_file", {"path": "tool.sh", "old": "1", "new": "2"}))

    info = target.stat()
    assert target.read_text() == "echo 2\n"
    assert (info.st_uid, info.st_gid) == (1000, 1000)
    assert stat.S_IMODE(info.st_mode) == 0o4755


@needs_root
def test_a_setuid_file_whose_owner_cannot_be_kept_loses_setuid_and_setgid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "tool.sh"
    target.write_text("echo 1\n")
    os.chown(target, 1000, 1000)
    target.chmod(0o6755)

    def refused_chown(*_args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    workspace.read_file("tool.sh")
    monkeypatch.setattr(os, "fchown", refused_chown)
    workspace.execute(ToolAction("edit_file", {"path": "tool.sh", "old": "1", "new": "2"}))

    info = target.stat()
    assert target.read_text() == "echo 2\n"
    assert info.st_uid == os.geteuid()
    assert stat.S_IMODE(info.st_mode) == 0o755


def test_a_file_with_a_long_name_can_be_edited(tmp_path: Path) -> None:
    name = "a" * 247 + ".py"  # 250 bytes: a legal name with no room for a longer sibling
    (tmp_path / name).write_text("x = 1\n")
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    workspace.read_file(name)
    result = workspace.execute(ToolAction("edit_file", {"path": name, "old": "1", "new": "2"}))

    assert result == f"edited {name}"
    assert (tmp_path / name).read_text() == "x = 2\n"
    assert sorted(os.listdir(tmp_path)) == [name]


@pytest.mark.parametrize("name", ["b" * 256, "é" * 128, "src/" + "c" * 300])
def test_an_over_long_name_is_refused_before_approval(tmp_path: Path, name: str) -> None:
    (tmp_path / "src").mkdir()
    asked: list[ToolProposal] = []
    workspace = make_workspace(
        tmp_path,
        confirm_proposal=lambda proposal: asked.append(proposal) or True,
        allow_writes=True,
    )
    result = workspace.execute(ToolAction("write_file", {"path": name, "content": "x"}))

    assert result == "error: path is too long"
    assert asked == []


def test_a_write_removes_stale_temporary_files_from_its_directory(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    stale = [
        tmp_path / "src" / ".cf-0123456789ab.tmp",
        tmp_path / "src" / ".app.py.counterfoil-0123456789ab.tmp",
    ]
    fresh = tmp_path / "src" / ".cf-ba9876543210.tmp"
    elsewhere = tmp_path / ".cf-00000000000a.tmp"
    for path in (*stale, fresh, elsewhere):
        path.write_text("half\n")
    an_hour_ago = time.time() - 3600
    for path in (*stale, elsewhere):
        os.utime(path, (an_hour_ago, an_hour_ago))
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    result = workspace.execute(
        ToolAction("write_file", {"path": "src/new.py", "content": "x = 1\n"})
    )

    assert result == "wrote src/new.py"
    assert sorted(os.listdir(tmp_path / "src")) == [fresh.name, "new.py"]
    assert elsewhere.exists()

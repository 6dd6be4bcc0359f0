"""On a file system with 1-second timestamps (ext4 with 128-byte inodes here; HFS+, FAT, some
network and FUSE file systems), a write in the same second as the before-snapshot leaves the
stat it changes as it was: the racy rule re-reads what changed in that second, so the
command's changes still show it. Needs root and a loop device (skipped with why otherwise)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from counterfoil import ReceiptStore
from counterfoil.commands.tree.changes import TreeChanges
from counterfoil.commands.tree.command_tree import CommandTree
from counterfoil.commands.tree.snapshot import TreeLimits, TreeRules

pytestmark = pytest.mark.usefixtures("listing_loops")
ATTEMPTS = 3


def mounted_or_why(image: Path, mount: Path) -> str | None:
    """Mount a fresh 1-second-timestamp file system at `mount`; why not, when it cannot be."""
    if os.geteuid() != 0:
        return "mounting a loop file system needs root"
    if shutil.which("mkfs.ext4") is None or shutil.which("mount") is None:
        return "mkfs.ext4 or mount is not installed"
    with image.open("wb") as handle:
        handle.truncate(16 << 20)
    for argv in (
        ["mkfs.ext4", "-q", "-F", "-I", "128", str(image)],
        ["mount", "-o", "loop", str(image), str(mount)],
    ):
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{argv[0]} failed: {done.stderr.strip()[-200:]}"
    return None


@pytest.fixture
def one_second_root(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "mount"
    mount.mkdir()
    why = mounted_or_why(tmp_path / "image", mount)
    if why is not None:
        pytest.skip(f"no 1-second-timestamp file system: {why}")
    try:
        probe = mount / "probe"
        probe.touch()
        assert probe.stat().st_ctime_ns % 1_000_000_000 == 0  # whole seconds: the clock wanted
        probe.unlink()
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def early_in_a_second() -> None:
    time.sleep(1.02 - time.time() % 1)


def changes_in_one_second(
    root: Path, prepare: Callable[[], None], command: Callable[[], None], watched: Path
) -> TreeChanges:
    """`prepare`, a before-snapshot once its writes are past the fine clock's racy window,
    then `command`, all in one second (`watched`'s stat unchanged by `command` proves it)."""
    for _ in range(ATTEMPTS):
        tree = CommandTree(root, TreeRules(), ReceiptStore(), TreeLimits(walk_threads=0))
        early_in_a_second()
        prepare()
        time.sleep(0.15)
        before, _ = tree.before()
        was = watched.stat()
        command()
        now = watched.stat()
        if (now.st_mtime_ns, now.st_ctime_ns) == (was.st_mtime_ns, was.st_ctime_ns):
            return tree.after(before)
        shutil.rmtree(root / "src")
    pytest.fail(f"no attempt of {ATTEMPTS} stayed within one second")


def test_a_file_made_in_a_folder_listed_earlier_that_second_is_a_change(
    one_second_root: Path,
) -> None:
    src = one_second_root / "src"

    def prepare() -> None:
        src.mkdir()
        (src / "a.py").write_text("A = 1\n")

    changes = changes_in_one_second(
        one_second_root, prepare, lambda: (src / "b.py").write_text("B = 1\n"), src
    )

    assert [(change.path, change.change) for change in changes.changes] == [("src/b.py", "created")]


def test_a_same_size_rewrite_in_the_second_of_the_before_snapshot_is_a_change(
    one_second_root: Path,
) -> None:
    src = one_second_root / "src"

    def prepare() -> None:
        src.mkdir()
        (src / "a.py").write_text("A = 1\n")

    changes = changes_in_one_second(
        one_second_root, prepare, lambda: (src / "a.py").write_text("A = 2\n"), src / "a.py"
    )

    assert [(change.path, change.change) for change in changes.changes] == [
        ("src/a.py", "modified")
    ]

"""Confine is a boundary even when the gate runs as root (containers, CI): the command holds no
capability, so it can neither undo the sandbox's mounts nor write outside the root."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy

PYTHON = sys.executable
as_root_with_bubblewrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None or os.geteuid() != 0,
    reason="needs bubblewrap on Linux, run as root (as CI runs)",
)


def confined(root: Path, body: str) -> str:
    root.mkdir()
    (root / ".counterfoil").mkdir()
    (root / "tool.py").write_text(body)
    policy = ToolPolicy(root, allowed_commands=((PYTHON, "tool.py"),), command_sandbox="confine")
    store = ReceiptStore(root / ".counterfoil/receipts.jsonl", signer=None)
    space = make_workspace(policy, store=store, answer=True)
    return space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))


def shell(script: str) -> str:
    return (
        f"import subprocess, sys\nsys.exit(subprocess.run(['sh', '-c', {script!r}]).returncode)\n"
    )


@as_root_with_bubblewrap
def test_a_confined_command_run_as_root_holds_no_capability(tmp_path: Path) -> None:
    observation = confined(
        tmp_path / "p", "print([l for l in open('/proc/self/status') if l.startswith('CapEff')])\n"
    )

    assert "CapEff:\\t0000000000000000" in observation


@as_root_with_bubblewrap
def test_a_confined_command_run_as_root_cannot_unmount_its_private_tmp(tmp_path: Path) -> None:
    observation = confined(tmp_path / "p", shell("umount -l /tmp && echo UNMOUNTED"))

    assert observation.startswith("status: ") and "UNMOUNTED" not in observation


@as_root_with_bubblewrap
def test_a_confined_command_run_as_root_cannot_remount_the_system_writable(
    tmp_path: Path,
) -> None:
    outside = Path(sys.prefix) / f"counterfoil-remounted-{time.time_ns()}.txt"
    script = f"mount -o remount,rw / ; mount -o remount,rw,bind {sys.prefix} ; echo x > {outside}"
    try:
        observation = confined(tmp_path / "p", shell(script))

        assert not outside.exists(), observation
    finally:
        outside.unlink(missing_ok=True)


@as_root_with_bubblewrap
def test_a_confined_command_run_as_root_cannot_mount_over_the_root(tmp_path: Path) -> None:
    observation = confined(tmp_path / "p", shell("mount -t tmpfs none /usr && echo MOUNTED"))

    assert "MOUNTED" not in observation

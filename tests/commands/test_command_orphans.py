"""Nothing outlives its receipt even when the sandbox is off and the command kills its own
reaper: the gate's process is the subreaper of last resort and ends what the command left."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.processes import wait_dead
from tests.support.workspaces import make_workspace

from counterfoil import ReceiptStore, ToolAction, ToolPolicy, Workspace

PYTHON = sys.executable
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="a child subreaper is Linux's (docs/gate.md says so)",
)
# The orphan writes its pid, then waits for `go` (written by the test once the receipt is
# there) before it would write `after-the-receipt.txt`: a survivor writes it, a killed one never.
KILL_THE_REAPER = (
    "import os, signal, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    open('orphan.pid.part', 'w').write(str(os.getpid()))\n"
    "    os.rename('orphan.pid.part', 'orphan.pid')\n"
    "    while not os.path.exists('go'):\n"
    "        time.sleep(0.01)\n"
    "    open('after-the-receipt.txt', 'w').close()\n"
    "    os._exit(0)\n"
    "while not os.path.exists('orphan.pid'):\n"
    "    time.sleep(0.01)\n"
    "os.kill(os.getppid(), signal.SIGKILL)\n"
)


def project(root: Path, body: str) -> Workspace:
    root.mkdir()
    (root / ".counterfoil").mkdir()
    (root / "tool.py").write_text(body)
    policy = ToolPolicy(root, allowed_commands=((PYTHON, "tool.py"),), command_sandbox="off")
    store = ReceiptStore(root / ".counterfoil/receipts.jsonl", signer=None)
    return make_workspace(policy, store=store, answer=True)


@linux_only
def test_a_command_that_kills_its_reaper_leaves_nothing_running_after_its_receipt(
    tmp_path: Path,
) -> None:
    space = project(tmp_path / "p", KILL_THE_REAPER)

    observation = space.execute(ToolAction("run_command", {"argv": [PYTHON, "tool.py"]}))
    orphan = int((tmp_path / "p" / "orphan.pid").read_text())
    (tmp_path / "p" / "go").touch()

    assert wait_dead(orphan)
    assert not (tmp_path / "p" / "after-the-receipt.txt").exists()
    assert "leftover process" in observation


@linux_only
def test_a_child_the_gate_started_in_its_own_session_is_not_taken_for_an_orphan(
    tmp_path: Path,
) -> None:
    from counterfoil.commands.orphans import own_child

    with own_child() as note:
        search = subprocess.Popen(["sleep", "30"], start_new_session=True)
        note(search.pid)
    try:
        project(tmp_path / "p", KILL_THE_REAPER).execute(
            ToolAction("run_command", {"argv": [PYTHON, "tool.py"]})
        )

        assert search.poll() is None
    finally:
        search.kill()
        search.wait()

"""Shutting the daemon down while a command runs: the command ends and keeps its receipt."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.support.processes import GUARD_SECONDS, alive

from .conftest import StartDaemon

LONG_ARGV = ["python", "long.py"]
LONG_COMMAND = (
    "import os, time\n"
    "open('long.pid', 'w').write(str(os.getpid()))\n"
    "print('started', flush=True)\n"
    "time.sleep(120)\n"
)


async def written(path: Path, timeout: float = GUARD_SECONDS) -> None:
    """Wait for a file the command writes: the daemon says nothing when it appears."""
    async with asyncio.timeout(timeout):
        while not (path.exists() and path.read_text()):
            await asyncio.sleep(0.05)


async def test_shutdown_ends_a_running_command_and_records_it(
    start_daemon: StartDaemon, demo_project: Path
) -> None:
    (demo_project / "long.py").write_text(LONG_COMMAND, encoding="utf-8")
    daemon = await start_daemon({"allowedCommands": [LONG_ARGV]})
    pending = daemon.send("counterfoil/runValidation", {"argv": LONG_ARGV})
    pid_file = demo_project / "long.pid"
    await written(pid_file)
    pid = int(pid_file.read_text())

    await daemon.client.shutdown_session()  # answered once the command is ended, not run out
    daemon.exited = True
    pending.cancel()

    assert not alive(pid)
    log = demo_project / ".counterfoil" / "receipts.jsonl"
    [line] = log.read_text(encoding="utf-8").splitlines()
    receipt = json.loads(line)
    assert receipt["arguments"] == {"argv": LONG_ARGV}
    assert receipt["exit_state"] == "error"
    assert receipt["result"].startswith("status: terminated\noutput:\nstarted\n")

"""A stop (SIGTERM) that reaches the reaper while it is still starting the command ends the
command as a stop, never as a command that "could not start": the reaper holds SIGTERM back
until `Popen` has returned. On a starved machine a timeout landed there, and the gate reported
a running command as one that never started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from counterfoil.commands.runner import REAPER

# The reaper as a script, with `Popen` sending the stop the moment the command has started and
# before `Popen` returns: where a timeout on a starved machine arrived.
STOPPED_WHILE_STARTING = """
import os, runpy, signal, subprocess, sys
real = subprocess.Popen
class Popen(real):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with open(sys.argv[-1] + ".pid", "w") as out:
            out.write(str(self.pid))
        os.kill(os.getpid(), signal.SIGTERM)
subprocess.Popen = Popen
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_stop_while_the_command_starts_ends_it_as_a_stop(tmp_path: Path) -> None:
    marker = str(tmp_path / "command")
    read, write = os.pipe()
    try:
        subprocess.run(
            [
                sys.executable,
                "-I",
                "-S",
                "-c",
                STOPPED_WHILE_STARTING,
                str(REAPER),
                str(write),
                "-",
                "-",
                "-",
                "--",
                sys.executable,
                "-c",
                "import time; time.sleep(600)",
                marker,
            ],
            pass_fds=(write,),
            check=True,
            timeout=120,
        )
        os.close(write)
        with os.fdopen(read, "rb") as report_file:
            report = json.loads(report_file.read())
    finally:
        for fd in (read, write):
            try:
                os.close(fd)
            except OSError:
                pass
    assert "error" not in report, report
    assert report["status"] == -9  # the stop's SIGKILL, after the command had started
    pid = int(Path(marker + ".pid").read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pass
    else:  # reaped by the reaper: a pid still there is another process, never the sleep
        assert Path(f"/proc/{pid}/cmdline").read_bytes().find(b"time.sleep(600)") == -1

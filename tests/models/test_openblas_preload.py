"""OpenBLAS is preloaded into a process that may run a model, and into nothing it starts: a
preloaded, threaded OpenBLAS makes bubblewrap hang, so a confined command would never run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from counterfoil.openblas import OPENBLAS

SERVER = Path(__file__).resolve().parents[2] / "server"
PROBE = """
from counterfoil.openblas import preload_openblas
preload_openblas()
import os, subprocess
print('openblas' in open('/proc/self/maps').read())
print(os.environ.get('LD_PRELOAD'))
print(subprocess.run(['bwrap', '--ro-bind', '/', '/', '--unshare-net', '--unshare-pid', '--',
                      'true'], timeout=20).returncode)
"""


def test_the_process_keeps_openblas_and_what_it_starts_does_not() -> None:
    assert OPENBLAS.is_file(), "scripts/install.sh installs libopenblas0-pthread"
    environment = {**os.environ, "PYTHONPATH": str(SERVER)}
    environment.pop("LD_PRELOAD", None)
    environment.pop("COUNTERFOIL_OPENBLAS", None)

    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip

    assert done.stdout.split() == ["True", "None", "0"]

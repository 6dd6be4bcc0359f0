"""OpenBLAS preloaded into a process that may run a model on the CPU (standard library only,
so the daemon's start path stays light).

MLX's CPU backend finds its BLAS at load time, so OpenBLAS must be in `LD_PRELOAD` before the
interpreter starts: a command that may load a local model re-executes itself once with it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OPENBLAS = Path("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0")


def preload_openblas() -> None:
    """Re-execute this very command line (interpreter flags included) with OpenBLAS preloaded,
    once, where it exists. Does nothing when it is already preloaded, absent, not Linux, or
    turned off with `COUNTERFOIL_OPENBLAS=0`."""
    preload = os.environ.get("LD_PRELOAD", "")
    if (
        "openblas" in preload
        or os.environ.get("COUNTERFOIL_OPENBLAS") == "0"
        or not sys.platform.startswith("linux")
        or not OPENBLAS.is_file()
    ):
        return
    environment = {**os.environ, "LD_PRELOAD": f"{OPENBLAS} {preload}".strip()}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)

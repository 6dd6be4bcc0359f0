"""OpenBLAS preloaded into a process that may run a model on the CPU (standard library only,
so the daemon's start path stays light).

MLX's CPU backend finds its BLAS at load time, so OpenBLAS must be in `LD_PRELOAD` before the
interpreter starts: a command that may load a local model re-executes itself once with it.
Once loaded it is taken out of the environment again, so nothing this process starts inherits
it: a preloaded, threaded OpenBLAS makes bubblewrap hang, and a person's command has no use
for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OPENBLAS = Path("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0")
TRIED = "COUNTERFOIL_OPENBLAS_TRIED"  # set for the re-executed process alone, then removed


def preload_openblas() -> None:
    """Re-execute this very command line (interpreter flags included) with OpenBLAS preloaded,
    once, where it exists. Does nothing when it is already loaded, absent, not Linux, or
    turned off with `COUNTERFOIL_OPENBLAS=0`; after the re-exec it leaves the environment
    as it was."""
    tried = os.environ.pop(TRIED, None) is not None
    if tried or str(OPENBLAS) in os.environ.get("LD_PRELOAD", ""):
        without_openblas(os.environ)
        return
    if (
        os.environ.get("COUNTERFOIL_OPENBLAS") == "0"
        or not sys.platform.startswith("linux")
        or not OPENBLAS.is_file()
    ):
        return
    preload = os.environ.get("LD_PRELOAD", "")
    environment = {**os.environ, "LD_PRELOAD": f"{OPENBLAS} {preload}".strip(), TRIED: "1"}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)


def without_openblas(environment: dict[str, str] | os._Environ[str]) -> None:
    """Take OpenBLAS out of `environment`'s LD_PRELOAD (the library stays loaded here)."""
    kept = [item for item in environment.get("LD_PRELOAD", "").split() if "openblas" not in item]
    if kept:
        environment["LD_PRELOAD"] = " ".join(kept)
    else:
        environment.pop("LD_PRELOAD", None)

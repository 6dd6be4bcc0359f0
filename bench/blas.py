"""Benchmarks run with Debian's multithreaded OpenBLAS when it is installed.

mlx[cpu] on Linux ships a reference BLAS (about 3.6 GFLOP/s for a 1024x1024 float32 matmul on
the project's 2-core machines); `libopenblas0-pthread` preloaded gives about 93 GFLOP/s.
`use_openblas()` re-executes the benchmark with LD_PRELOAD set unless it already is, or
COUNTERFOIL_BENCH_REFERENCE_BLAS=1 asks for the bundled one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OPENBLAS = Path("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0")


def use_openblas() -> str:
    """Return a description of the BLAS in use, re-executing once to preload OpenBLAS."""
    preload = os.environ.get("LD_PRELOAD", "")
    if "openblas" in preload:
        return f"OpenBLAS ({preload})"
    if os.environ.get("COUNTERFOIL_BENCH_REFERENCE_BLAS") == "1":
        return "MLX's bundled BLAS (COUNTERFOIL_BENCH_REFERENCE_BLAS=1)"
    if sys.platform.startswith("linux") and OPENBLAS.is_file():
        environment = {**os.environ, "LD_PRELOAD": f"{OPENBLAS} {preload}".strip()}
        os.execve(sys.executable, [sys.executable, *sys.argv], environment)
    return "platform default"


def matmul_gflops(size: int = 1024, repeats: int = 5) -> float:
    import time

    import mlx.core as mx

    a = mx.random.normal((size, size))
    b = mx.random.normal((size, size))
    mx.eval(a @ b)
    started = time.perf_counter()
    for _ in range(repeats):
        mx.eval(a @ b)
    seconds = time.perf_counter() - started
    return 2 * size**3 * repeats / seconds / 1e9

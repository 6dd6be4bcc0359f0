"""What `counterfoil doctor` reports of MLX: the backend it runs on (and on Linux whether
OpenBLAS is loaded), and which path a local model takes on this machine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ...openblas import OPENBLAS
from ..hub.availability import Check


def loaded_openblas() -> str | None:
    """The OpenBLAS library this process has mapped (Linux), if any."""
    try:
        maps = Path("/proc/self/maps").read_text(errors="replace")
    except OSError:
        return None
    for line in maps.splitlines():
        if "openblas" in line.lower():
            return line.split()[-1]
    return None


def mlx_check() -> Check:
    if importlib.util.find_spec("mlx") is None:
        return Check("mlx backend", "MLX is not installed (scripted and endpoint models only)")
    try:
        import mlx.core as mx
    except Exception as error:  # noqa: BLE001 - a broken install is a finding, not a crash
        return Check("mlx backend", f"MLX does not import: {error}", False)
    if mx.metal.is_available():
        backend = "Metal"
    elif getattr(mx, "cuda", None) is not None and mx.cuda.is_available():
        backend = "CUDA"
    else:
        backend = "CPU"
    if sys.platform.startswith("linux"):
        blas = loaded_openblas()
        backend += f"; OpenBLAS {'in use: ' + blas if blas else 'not loaded'}"
    return Check("mlx backend", backend)


def cpu_path_check() -> Check:
    """Which path a local model takes on this machine: the GPU, or the CPU's float path with
    OpenBLAS or MLX's bundled BLAS (informational: every path works)."""
    try:
        import mlx.core as mx
    except ImportError:
        return Check("compute", "MLX not installed: no local model")

    if mx.default_device() == mx.gpu:
        return Check("compute", "GPU: quantized weights run as stored")
    if OPENBLAS.is_file():
        return Check(
            "compute",
            f"CPU: quantized weights dequantized to float32 at load, OpenBLAS ({OPENBLAS}, "
            "preloaded by counterfoil)",
        )
    return Check(
        "compute",
        "CPU: quantized weights run as stored (no OpenBLAS: install libopenblas0-pthread for "
        "the float32 path, about 10x faster prefill)",
    )

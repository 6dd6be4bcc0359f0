"""The fast path on a CPU: quantized weights dequantized, and OpenBLAS under MLX.

MLX's CPU backend runs quantized matmuls without a BLAS and its bundled BLAS is a reference
one, so a 4-bit model prefills at a crawl on a CPU. Where the default device is the CPU, the
weights are dequantized once at load (float32: measured about 3x faster than float16 on a
CPU, side by side in bench/real_model.py, see docs/mlx.md) when they fit comfortably in the memory available, and a process that will load
a model re-executes itself once with Debian's OpenBLAS preloaded when it is installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...openblas import OPENBLAS

__all__ = ["OPENBLAS", "ComputePath", "blas_in_use", "use_fast_cpu_path"]
# The share of available memory the float weights may take.
MEMORY_SHARE = 0.5


@dataclass(frozen=True)
class ComputePath:
    """How the model computes: the device, the weights' form and the BLAS, for run headers."""

    device: str
    weights: str  # "quantized", "dequantized to float32", "as stored"
    blas: str

    def describe(self) -> str:
        return f"{self.device}, weights {self.weights}, {self.blas}"


def blas_in_use() -> str:
    """`OpenBLAS` when this process has it mapped, else MLX's bundled BLAS (on Linux)."""
    try:
        maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "platform BLAS"
    return "OpenBLAS" if "libopenblas" in maps else "MLX's bundled BLAS"


def _available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def _quantized_modules(model: Any) -> list[Any]:
    from mlx import nn

    kinds: tuple[type, ...] = (nn.QuantizedLinear, nn.QuantizedEmbedding)  # type: ignore[attr-defined]
    return [module for _, module in model.named_modules() if isinstance(module, kinds)]


def float_bytes(model: Any) -> int:
    """The bytes the model's weights take as float32 once dequantized."""
    from mlx.utils import tree_flatten

    parameters: Any = tree_flatten(model.parameters())
    total = sum(int(value.size) * 4 for _, value in parameters)
    for module in _quantized_modules(model):  # each packed uint32 holds 32 // bits values
        total += int(module.weight.size) * (32 // module.bits - 1) * 4
    return total


def use_fast_cpu_path(model: Any, *, dequantize: bool = True) -> ComputePath:
    """Dequantize `model` in place to float32 where the default device is the CPU, it is
    quantized, `dequantize` allows it, a fast BLAS is loaded (not MLX's bundled reference one,
    on which float32 prefill measured 1 token/s against 15 quantized) and the float weights
    fit; say which path it takes."""
    import mlx.core as mx

    device = "cpu" if mx.default_device() == mx.cpu else "gpu"
    blas = blas_in_use() if device == "cpu" else "GPU kernels"
    if not _quantized_modules(model):
        return ComputePath(device, "as stored", blas)
    if device != "cpu" or not dequantize:
        return ComputePath(device, "quantized", blas)
    if blas == "MLX's bundled BLAS":  # float matmuls there are slower than quantized ones
        return ComputePath(device, "quantized (no OpenBLAS loaded)", blas)
    available = _available_bytes()
    if available is not None and float_bytes(model) > available * MEMORY_SHARE:
        return ComputePath(device, "quantized (too large to dequantize here)", blas)
    dequantize_to_float32(model)
    return ComputePath(device, "dequantized to float32", blas)


def dequantize_to_float32(model: Any) -> None:
    dequantize_to(model, "float32")


def dequantize_to(model: Any, dtype: str) -> None:
    """Dequantize `model` in place and cast its floating weights to `dtype` ("float32" or
    "float16"; bench/real_model.py measures both side by side)."""
    import mlx.core as mx
    from mlx.utils import tree_map
    from mlx_lm.utils import dequantize_model

    target = {"float32": mx.float32, "float16": mx.float16}[dtype]
    dequantize_model(model)
    model.update(
        tree_map(
            lambda value: (
                value.astype(target) if mx.issubdtype(value.dtype, mx.floating) else value
            ),
            model.parameters(),
        )
    )
    mx.eval(model.parameters())

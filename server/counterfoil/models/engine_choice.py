"""Which engine runs a local model when the person has not chosen one (`engine: auto`).

On a CPU, MLX runs a GGUF file by importing it to float32 (minutes, gigabytes) and decodes it
at a fraction of llama.cpp's rate on the same file, so where MLX has no GPU and llama.cpp is
installed a `.gguf` model runs on llama.cpp. Anything else, and an engine the person named,
runs as it did. The run's header says which engine and why (`EngineChoice.line`).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib import metadata

from .scripted import SCRIPTED_PREFIX

AUTO = "auto"
MLX = "mlx"
LLAMA_CPP = "llama.cpp"


@dataclass(frozen=True)
class EngineChoice:
    """The engine a local model runs on, and the reason in a few words."""

    engine: str
    reason: str

    @property
    def line(self) -> str:
        return f"engine: {self.engine} ({self.reason})"


# MLX's GPU backends are packages of their own beside `mlx`: Metal on macOS, CUDA on Linux.
MLX_GPU_BACKENDS = ("mlx-metal", "mlx-cuda-12", "mlx-cuda-13", "mlx-cuda")


def mlx_has_gpu() -> bool:
    """Whether MLX is installed here with a GPU backend (Metal or CUDA), read from the installed
    packages: MLX itself is imported only inside `models/mlx/`, and only to run a model."""
    return installed("mlx") and any(installed(name) for name in MLX_GPU_BACKENDS)


def installed(distribution: str) -> bool:
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def llamacpp_installed() -> bool:
    """Whether the llama.cpp extra's engine (xllamacpp) can be imported."""
    try:
        return importlib.util.find_spec("xllamacpp") is not None
    except (ImportError, ValueError):
        return False


def choose_engine(spec: str, engine: str, *, endpoint: str | None = None) -> EngineChoice | None:
    """The engine for `spec` under the `engine` setting; None where no local engine runs it
    (a model server, a script)."""
    if endpoint or spec.startswith(SCRIPTED_PREFIX):
        return None
    if engine != AUTO:
        return EngineChoice(engine, "chosen by the engine setting")
    if not spec.lower().endswith(".gguf"):
        return EngineChoice(MLX, "not a .gguf file")
    if mlx_has_gpu():
        return EngineChoice(MLX, "a .gguf file, and MLX has a GPU here")
    if not llamacpp_installed():
        return EngineChoice(
            MLX,
            "a .gguf file and no GPU for MLX, but llama.cpp is not installed: "
            "pip install 'counterfoil[llamacpp]' runs it faster",
        )
    return EngineChoice(LLAMA_CPP, "a .gguf file, MLX has no GPU here, llama.cpp is installed")


def engine_for(spec: str, engine: str, *, endpoint: str | None = None) -> str:
    """`choose_engine`'s engine, or the setting as given where no local engine runs `spec`."""
    choice = choose_engine(spec, engine, endpoint=endpoint)
    return engine if choice is None else choice.engine

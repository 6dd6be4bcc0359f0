"""Model specs resolved to what `mlx_lm.load` accepts: a local directory or a repo id."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelLoadError

SHORT_NAMES: dict[str, str] = {
    "qwen3-0.6b": "Qwen/Qwen3-0.6B-MLX-4bit",
    "qwen3-1.7b": "Qwen/Qwen3-1.7B-MLX-4bit",
    "qwen3-4b": "Qwen/Qwen3-4B-MLX-4bit",
    "qwen3-8b": "Qwen/Qwen3-8B-MLX-4bit",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B-MLX-4bit",
}

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class ModelSource:
    spec: str
    location: str
    is_local: bool
    gguf: bool = False  # a llama.cpp file, imported into an MLX folder before loading


def resolve_model(spec: str) -> ModelSource:
    """A short name, a GGUF file, an existing local directory, or a `owner/name` repo id."""
    text = spec.strip()
    if not text:
        raise ModelLoadError("model spec is empty; pass a short name such as qwen3-4b")
    short = SHORT_NAMES.get(text.lower())
    if short is not None:
        return ModelSource(spec=text, location=short, is_local=False)
    path = Path(text).expanduser()
    if text.lower().endswith(".gguf"):
        if not path.is_file():
            raise ModelLoadError(f"GGUF file {path} does not exist")
        return ModelSource(spec=text, location=str(path.resolve()), is_local=True, gguf=True)
    if path.exists():
        if not path.is_dir():
            raise ModelLoadError(f"model path {path} is not a directory")
        return ModelSource(spec=text, location=str(path.resolve()), is_local=True)
    if text.startswith((".", "/", "~")) or text.endswith(("/", "\\")):
        raise ModelLoadError(f"model directory {path} does not exist")
    if _REPO_ID.match(text):
        return ModelSource(spec=text, location=text, is_local=False)
    names = ", ".join(SHORT_NAMES)
    raise ModelLoadError(
        f"unknown model {text!r}: use one of {names}, a Hugging Face repo id "
        "(owner/name) or a local model directory"
    )

"""The `ModelIdentity` of a loaded model: MLX (hub, folder or GGUF), a model server, a script."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..model import WrappedModel
from ..model_identity import ModelIdentity
from .file_digest import file_sha256

WEIGHT_SUFFIXES = (".safetensors", ".gguf", ".npz")


def weights_digest(folder: Path) -> str | None:
    """SHA-256 over the names and digests of a folder's weight files (each cached by stat)."""
    files = sorted(path for path in folder.iterdir() if path.name.endswith(WEIGHT_SUFFIXES))
    if not files:
        return None
    combined = hashlib.sha256()
    for path in files:
        combined.update(f"{path.name} {file_sha256(path)}\n".encode())
    return combined.hexdigest()


def template_digest(template: object) -> str | None:
    if not isinstance(template, str) or not template:
        return None
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


def mlx_identity(generate: Any) -> ModelIdentity:
    """What an `MLXGenerate` runs: its source resolved, its weights and template digested."""
    loaded = generate.loaded
    source = loaded.source
    folder = Path(loaded.folder) if getattr(loaded, "folder", None) else None
    resolved: dict[str, str] = {"engine": "mlx"}
    if source.gguf:
        resolved["gguf"] = source.location
        if loaded.gguf_sha256:
            resolved["gguf_sha256"] = loaded.gguf_sha256
    elif source.is_local:
        resolved["folder"] = source.location
    else:
        resolved["repo"] = source.location
        if folder is not None and folder.parent.name == "snapshots":
            resolved["revision"] = folder.name
    if loaded.compute is not None:
        resolved["compute"] = loaded.compute.describe()
    template = getattr(loaded.tokenizer, "chat_template", None)
    options = generate.options
    return ModelIdentity(
        spec=source.spec,
        resolved=resolved,
        weights_sha256=weights_digest(folder) if folder is not None else None,
        chat_template_sha256=template_digest(template),
        constrained=bool(options.constrain),
        sampling={"temperature": 0.0, "max_tokens": options.max_tokens},
    )


@runtime_checkable
class NamesItself(Protocol):
    """A model that says which model it is (a local MLX model: its source, weights and
    template digested)."""

    def identity(self) -> ModelIdentity: ...


def run_identity(model: object, spec: str) -> dict[str, Any] | None:
    """What a run records as its model's identity (receipts and the run's record carry it);
    None for a script, which proposes nothing of its own."""
    if spec.startswith("scripted:"):
        return None
    return identity_of(model, spec).as_record()


def identity_of(model: object, spec: str) -> ModelIdentity:
    """The identity of any model `load_generate` returns (`spec`: as the person gave it)."""
    wrapped = model
    while isinstance(wrapped, WrappedModel) and not isinstance(wrapped, NamesItself):
        wrapped = wrapped.wrapped
    if isinstance(wrapped, NamesItself):
        return wrapped.identity()
    remote = sys.modules.get(f"{__package__}.server.remote")  # not loaded: no server in use
    if remote is not None and isinstance(wrapped, remote.RemoteGenerate):
        return ModelIdentity(
            spec=spec,
            resolved={"endpoint": wrapped.endpoint, "served_model": str(wrapped.model or "")},
            constrained=wrapped.schema_mode != "none",
            sampling={"temperature": 0.0, "max_tokens": wrapped.max_tokens},
        )
    return ModelIdentity(spec=spec, resolved={"kind": type(wrapped).__name__})

"""Which model proposed an effect, as the run's record, each receipt and each eval row name it.

The spec as given says little on its own (`qwen3-4b` moves with the hub; a folder's files can
be replaced), so the identity also holds what the spec resolved to (repo and revision, folder,
GGUF digest, or endpoint and the model the server reported), a digest of the weights, a digest
of the chat template, whether actions were constrained, and the sampling settings. Standard
library only: the models package fills it in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelIdentity:
    spec: str
    resolved: dict[str, str] = field(default_factory=dict)
    weights_sha256: str | None = None
    chat_template_sha256: str | None = None
    constrained: bool = False
    sampling: dict[str, Any] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        """The JSON object a record or receipt holds."""
        return {
            "spec": self.spec,
            "resolved": dict(self.resolved),
            "weights_sha256": self.weights_sha256,
            "chat_template_sha256": self.chat_template_sha256,
            "constrained": self.constrained,
            "sampling": dict(self.sampling),
        }


def describe_identity(record: object) -> str | None:
    """One line for a person from a recorded identity (None: not one)."""
    if not isinstance(record, dict) or not isinstance(record.get("spec"), str):
        return None
    resolved = record.get("resolved")
    where = ", ".join(f"{key} {value}" for key, value in (resolved or {}).items())
    weights = record.get("weights_sha256")
    template = record.get("chat_template_sha256")
    parts = [str(record["spec"])]
    if where:
        parts.append(f"({where})")
    if isinstance(weights, str):
        parts.append(f"weights {weights[:16]}")
    if isinstance(template, str):
        parts.append(f"template {template[:16]}")
    parts.append("constrained" if record.get("constrained") else "unconstrained")
    sampling = record.get("sampling")
    if isinstance(sampling, dict) and sampling:
        parts.append(", ".join(f"{key}={value}" for key, value in sorted(sampling.items())))
    return " ".join(parts)


ENGINE_NAMES = {"mlx": "MLX", "llama.cpp": "llama.cpp"}


def identity_short(record: object) -> str | None:
    """The model in a few words, the one line every surface shows (the tree's tooltip, the run
    panel and its verdict, the exported statement): its spec, its weights' digest in short form
    and what ran it, as the record names it ("qwen3-4b · weights 918b844f4ec1 · MLX, compute
    cpu", "… · llama.cpp", "… · model server URL"). A record that names no engine and no
    server was made before engines were recorded, when MLX ran every local model."""
    if not isinstance(record, dict) or not isinstance(record.get("spec"), str):
        return None
    resolved = record.get("resolved")
    resolved = resolved if isinstance(resolved, dict) else {}
    parts = [str(record["spec"])]
    digest = record.get("weights_sha256") or resolved.get("gguf_sha256")
    if isinstance(digest, str):
        parts.append(f"weights {digest[:12]}")
    engine = resolved.get("engine")
    if resolved.get("endpoint"):
        parts.append(f"model server {resolved['endpoint']}")
    elif isinstance(engine, str) and engine:
        ran = ENGINE_NAMES.get(engine, engine)
        parts.append(f"{ran}, compute {resolved['compute']}" if resolved.get("compute") else ran)
    elif resolved.get("kind"):
        parts.append(str(resolved["kind"]))
    else:
        compute = resolved.get("compute")
        parts.append(f"MLX, compute {compute}" if compute else "MLX")
    return " · ".join(parts)

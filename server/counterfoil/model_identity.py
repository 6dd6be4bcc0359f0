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

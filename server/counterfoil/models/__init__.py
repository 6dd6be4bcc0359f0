"""Model specs turned into `generate(messages) -> str` callables.

One factory serves the CLI and the daemon alike, so a spec string means the same
thing everywhere: `scripted:PATH` replays recorded responses, anything else is an
MLX model (a short name, a repo id or a local directory), imported only when chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import ModelLoadError
from .progress import ModelProgress
from .scripted import SCRIPTED_PREFIX, ScriptedModel, ScriptExhausted

Generate = Callable[[list[dict[str, str]]], str]

__all__ = [
    "Generate",
    "ModelLoadError",
    "ModelProgress",
    "ScriptExhausted",
    "ScriptedModel",
    "load_generate",
]


def load_generate(spec: str, **options: Any) -> Generate:
    """Return the generate callable for `spec`.

    Options understood by MLX models (ignored by scripted ones): `max_tokens`,
    `enable_thinking`, `device` ("cpu" | "gpu" | None), `constrain`,
    `available_tools`, `allowed_commands`, `on_token(text)`, `on_progress(ModelProgress)`.
    An MLX model that cannot be loaded (MLX missing, unknown name, failed download) raises
    `ModelLoadError` with a one-line message. See `counterfoil.models.mlx`.
    """
    endpoint = options.pop("endpoint", None)
    if endpoint:
        from .remote import load_remote_generate

        return load_remote_generate(spec or "", endpoint=endpoint, **options)
    for remote_only in (
        "api_key_env",
        "allow_insecure_http",
        "schema_mode",
        "timeout_seconds",
        "should_stop",
    ):
        options.pop(remote_only, None)
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("model spec must be a non-empty string")
    if spec.startswith(SCRIPTED_PREFIX):
        return ScriptedModel.from_file(spec[len(SCRIPTED_PREFIX) :])
    from .mlx import load_mlx_generate

    return load_mlx_generate(spec, **options)

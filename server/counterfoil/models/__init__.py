"""Model specs turned into `generate(messages) -> str` callables.

One factory serves the CLI and the daemon alike, so a spec string means the same
thing everywhere: `scripted:PATH` replays recorded responses, anything else is an
MLX model (a short name, a repo id or a local directory), imported only when chosen, a GGUF
file on a llama.cpp server Counterfoil starts, or, with an endpoint in the options, the model
an OpenAI-compatible server serves.

One folder per backend: `mlx/` (the only one that imports MLX or mlx-lm), `server/` (model
servers), `llamacpp/`, `gguf/` (reading GGUF files for the MLX import) and `hub/` (the Hugging
Face hub); what they share (errors, options, progress, identity) sits here. This module is the
one way into `mlx/` from outside it, inside functions, so nothing loads MLX until a local model
is asked for: `load_generate`, `mlx_checks` and the `KvPrefixGenerator` attribute.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model import Model, ResponseStats
from .errors import ModelLoadError
from .options import GenerationOptions
from .progress import ModelProgress, ProgressCallback
from .scripted import SCRIPTED_PREFIX, ScriptedModel, ScriptExhausted
from .server.endpoint import EndpointOptions

if TYPE_CHECKING:
    from .hub.availability import Check
    from .mlx.kv_prefix import KvPrefixGenerator

Generate = Callable[[list[dict[str, str]]], str]

__all__ = [
    "EndpointOptions",
    "Generate",
    "GenerationOptions",
    "KvPrefixGenerator",
    "Model",
    "ModelLoadError",
    "ModelProgress",
    "ProgressCallback",
    "ResponseStats",
    "ScriptExhausted",
    "ScriptedModel",
    "close_model",
    "load_generate",
    "mlx_checks",
    "streams_from_server",
]


def load_generate(
    spec: str,
    options: GenerationOptions | None = None,
    *,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Model:
    """Return the model for `spec` (a `Model`: the generate callable and its counters).

    With `options.endpoint`, `spec` is the served model's name (empty: the first the server
    lists) and the model runs on that server; `should_stop` is polled while it streams, so a
    stop closes the connection at once (see `counterfoil.models.server.remote`). With
    `options.llama_cpp`, `spec` is a GGUF file run on a llama.cpp server started for it
    (`counterfoil.models.llamacpp.llamacpp`; `close()` stops it), polled the same way.

    `options` (default `GenerationOptions()`) and `on_progress` matter to MLX and remote models;
    `on_progress` receives one `ModelProgress` stream: loading, then per response
    `generating` (one report per token, with its text) and `ready`. An MLX model that cannot be
    loaded (MLX missing, unknown name, failed download) raises `ModelLoadError` with a
    one-line message. An MLX generate callable has `configure_tools(available_tools,
    allowed_commands)`, which `run_agent` calls, so it is constrained to the enabled tools
    without passing them here. See `counterfoil.models.mlx.mlx`.
    """
    if options is not None and options.endpoint is not None:
        from .server.remote_loading import load_remote_generate

        return load_remote_generate(spec, options, on_progress=on_progress, should_stop=should_stop)
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("model spec must be a non-empty string")
    if spec.startswith(SCRIPTED_PREFIX):
        return ScriptedModel.from_file(spec[len(SCRIPTED_PREFIX) :])
    if options is not None and options.llama_cpp is not None:
        from .llamacpp.llamacpp import load_llamacpp_generate

        return load_llamacpp_generate(
            spec, options, on_progress=on_progress, should_stop=should_stop
        )
    from .mlx.mlx import load_mlx_generate

    return load_mlx_generate(spec, options, on_progress=on_progress)


def streams_from_server(options: GenerationOptions) -> bool:
    """Whether the model runs on a server (an endpoint, or llama.cpp started for it), whose
    stream a stop closes: `load_generate`'s `should_stop` is then polled."""
    return options.endpoint is not None or options.llama_cpp is not None


def close_model(model: object) -> None:
    """Release what a model holds outside this process: a llama.cpp server ends, a model
    server's connections close. Nothing to do for the others."""
    close = getattr(model, "close", None)
    if callable(close):
        close()


def mlx_checks() -> list[Check]:
    """What `counterfoil doctor` reports of MLX: its backend, and the path a local model takes
    on this machine (`counterfoil.models.mlx.checks`)."""
    from .mlx.checks import cpu_path_check, mlx_check

    return [mlx_check(), cpu_path_check()]


def __getattr__(name: str) -> Any:
    """`KvPrefixGenerator` (`counterfoil.models.mlx.kv_prefix`), imported when first used."""
    if name == "KvPrefixGenerator":
        from .mlx.kv_prefix import KvPrefixGenerator

        return KvPrefixGenerator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

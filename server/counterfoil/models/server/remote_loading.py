"""Loading a model-server model: the endpoint and key checked, the server asked for its models."""

from __future__ import annotations

from collections.abc import Callable

from ...settings.endpoints import may_carry_key
from ..errors import ModelLoadError
from ..options import GenerationOptions
from ..progress import ModelProgress, ProgressCallback
from .endpoint import DEFAULT_API_KEY_ENV, SCHEMA_MODES, api_key_from_environment, checked_endpoint
from .remote import RemoteGenerate


def load_remote_generate(
    spec: str,
    options: GenerationOptions,
    *,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RemoteGenerate:
    """Check the endpoint and key, ask the server for its models, and return the callable.

    `spec` is the served model's name; when empty, the first model the server lists.
    `options.constrain=False` sends no schema; `device` is the server's business and is
    ignored. Raises `ModelLoadError` with one actionable line when the server cannot be used.
    """
    endpoint = options.endpoint
    if endpoint is None:
        raise ValueError("load_remote_generate needs options with an endpoint")
    base = checked_endpoint(endpoint.url, allow_insecure_http=endpoint.allow_insecure_http)
    if endpoint.schema_mode not in SCHEMA_MODES:
        raise ModelLoadError(
            f"unknown schema mode {endpoint.schema_mode!r}: use one of {', '.join(SCHEMA_MODES)}"
        )
    key = api_key_from_environment(endpoint.api_key_env)
    if key is not None and not may_carry_key(base):
        variable = endpoint.api_key_env or DEFAULT_API_KEY_ENV
        raise ModelLoadError(
            f"the key in {variable} goes only over https:// or to this machine, and {base} is "
            "neither; use https:// or an SSH tunnel to 127.0.0.1, or unset the variable"
        )
    if on_progress is not None:
        on_progress(ModelProgress("loading", message=f"connecting to {base}"))
    generate = RemoteGenerate(
        base,
        spec.strip(),
        api_key=key,
        api_key_env=endpoint.api_key_env,
        max_tokens=options.max_tokens,
        enable_thinking=options.enable_thinking,
        schema_mode=endpoint.schema_mode if options.constrain else "none",
        available_tools=options.available_tools,
        allowed_commands=options.allowed_commands,
        timeout_seconds=endpoint.timeout_seconds,
        on_progress=on_progress,
        should_stop=should_stop,
        use_environment_proxy=endpoint.use_environment_proxy,
    )
    try:
        served = generate.list_models()
    except ModelLoadError as error:
        generate.close()
        if on_progress is not None:
            on_progress(ModelProgress("error", message=str(error)))
        raise
    if not generate.model:
        if not served:
            generate.close()
            raise ModelLoadError(f"the model server at {base} lists no models; pass --model NAME")
        generate.model = served[0]
    if on_progress is not None:
        on_progress(ModelProgress("ready", message=f"{generate.model} at {base} ready"))
    return generate

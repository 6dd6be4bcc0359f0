"""A GGUF file run by llama.cpp (`--engine llama.cpp`) as a `generate(messages) -> str` callable.

On a CPU llama.cpp prefills and decodes K-quant files several times faster than MLX's CPU path
(docs/mlx.md), so Counterfoil can run a GGUF on a llama.cpp server it starts itself
(`llamacpp_server`) and drive it with the model-server client: the action schema as
`response_format` (llama.cpp compiles it to a grammar), its prompt cache kept across turns,
prefill progress streamed, and Stop closing the stream. The identity names the file by its
SHA-256 and the engine, as for a file MLX imports.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from ...model_identity import ModelIdentity
from ..errors import ModelLoadError
from ..file_digest import file_sha256
from ..options import GenerationOptions, LlamaCppOptions
from ..progress import ModelProgress, ProgressCallback
from ..server.remote import Messages, RemoteGenerate

ENGINE = "llama.cpp"
logger = logging.getLogger(__name__)
DISTRIBUTION = "xllamacpp"


class LlamaCppGenerate(RemoteGenerate):
    """A `RemoteGenerate` on the llama.cpp server this object owns: `close` stops it."""

    def __init__(self, server: Any, gguf: Path, spec: str, **options: Any) -> None:
        super().__init__(server.url, "", api_key=server.key, **options)
        self.server = server
        self.gguf = gguf
        self.spec = spec
        self.gguf_sha256: str | None = None
        self.chat_template_sha256: str | None = None
        self.window = server.context_tokens

    def __repr__(self) -> str:
        return f"LlamaCppGenerate({str(self.gguf)!r})"

    def request_body(self, messages: Messages) -> dict[str, Any]:
        return {**super().request_body(messages), "cache_prompt": True, "return_progress": True}

    @property
    def context_tokens(self) -> int | None:
        return int(self.window)

    def describe_server(self) -> None:
        """Read the served model's window and chat template (a failure leaves them unknown)."""
        root = self.endpoint.removesuffix("/v1")
        try:
            models = self._client.get(f"{self.endpoint}/models").json()
            meta = models["data"][0].get("meta") or {}
            trained = meta.get("n_ctx_train")
            if isinstance(trained, int) and 0 < trained < self.window:
                self.window = trained
            template = self._client.get(f"{root}/props").json().get("chat_template")
            if isinstance(template, str) and template:
                self.chat_template_sha256 = hashlib.sha256(template.encode()).hexdigest()
        except Exception as error:  # noqa: BLE001 - the identity then lacks the template digest
            logger.warning("llama.cpp did not describe its model: %s", error)

    def identity(self) -> ModelIdentity:
        resolved = {"gguf": str(self.gguf), "engine": ENGINE}
        if self.gguf_sha256:
            resolved["gguf_sha256"] = self.gguf_sha256
        try:
            resolved["engine_version"] = f"{DISTRIBUTION} {metadata.version(DISTRIBUTION)}"
        except metadata.PackageNotFoundError:
            pass
        return ModelIdentity(
            spec=self.spec,
            resolved=resolved,
            weights_sha256=self.gguf_sha256,
            chat_template_sha256=self.chat_template_sha256,
            constrained=self.schema_mode != "none",
            sampling={"temperature": 0.0, "max_tokens": self.max_tokens},
        )

    def close(self) -> None:
        super().close()
        self.server.stop()


def load_llamacpp_generate(
    spec: str,
    options: GenerationOptions,
    *,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> LlamaCppGenerate:
    """Start llama.cpp on the GGUF file `spec` and return its generate callable.

    `options` is the run's `GenerationOptions` (with `llama_cpp` set). Raises `ModelLoadError`
    with one line when the file or the engine cannot be used.
    """
    from .llamacpp_server import LlamaCppServer, check_gguf_file

    engine = options.llama_cpp or LlamaCppOptions()
    path = Path(spec).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ModelLoadError(f"--engine llama.cpp runs a .gguf file; {spec!r} is not one")
    check_gguf_file(path)
    try:
        import xllamacpp  # noqa: F401 - only whether it is there
    except ImportError:
        raise ModelLoadError(
            "--engine llama.cpp needs xllamacpp: pip install 'counterfoil[llamacpp]'"
        ) from None

    def report(message: str) -> None:
        if on_progress is not None:
            on_progress(ModelProgress("loading", message=message))

    report(f"hashing {path.name}")
    digest = file_sha256(path)
    server = LlamaCppServer(
        path.resolve(),
        context_tokens=engine.context_tokens,
        threads=engine.threads,
    )
    report(f"starting llama.cpp for {path.name}")
    server.start(should_stop)
    try:
        generate = LlamaCppGenerate(
            server,
            path.resolve(),
            spec,
            max_tokens=options.max_tokens,
            enable_thinking=options.enable_thinking,
            schema_mode="json_schema" if options.constrain else "none",
            available_tools=options.available_tools,
            allowed_commands=options.allowed_commands,
            on_progress=on_progress,
            should_stop=should_stop,
        )
    except BaseException:
        server.stop()
        raise
    generate.gguf_sha256 = digest
    generate.describe_server()
    served = generate.list_models()
    generate.model = served[0] if served else path.name
    if on_progress is not None:
        on_progress(ModelProgress("ready", message=f"{path.name} on llama.cpp ready"))
    return generate

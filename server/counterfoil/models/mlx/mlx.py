"""A local MLX model as a `generate(messages) -> str` callable.

Loading goes through `mlx_lm.load`; each call applies the chat template, reuses the KV cache
of the previous turn for the shared token prefix, streams tokens to a callback, and (by
default) constrains the response to one valid action. mlx, mlx-lm and llguidance are
imported here only, when an MLX model is chosen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

from ...context.budget import prompt_budget
from ...model import McpListings, ModelReply, ResponseStats
from ...model_identity import ModelIdentity
from ...model_state import ModelCheckpoint
from ...receipts import canonical_json
from ...workspace_view import WorkspaceView
from ..errors import ModelLoadError, load_failure
from ..hub.model_names import ModelSource, resolve_model
from ..options import GenerationOptions
from ..progress import ModelProgress, ProgressCallback
from ..thinking import strip_thinking
from .cpu_path import ComputePath
from .prefill import prefill_in_chunks


class LoadedModel:
    """Weights and tokenizer loaded once per (model, device), shared by generate callables."""

    def __init__(
        self, source: ModelSource, model: Any, tokenizer: Any, config: dict[str, Any], stream: Any
    ) -> None:
        self.source = source
        self.model = model
        self.tokenizer = tokenizer
        self.vocab_size = _vocab_size(config, tokenizer)
        self.context_window = _context_window(config)
        self.stream = stream
        self.lock = threading.Lock()
        self._ll_tokenizer: Any = None
        self.compute: ComputePath | None = None  # set by `_load`: how the weights run here
        self.folder: str | None = None  # the folder mlx-lm loaded (a snapshot, an import)
        self.gguf_sha256: str | None = None  # the GGUF file's digest, for a GGUF spec

    def action_grammar(
        self,
        available_tools: Iterable[str] | None,
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> Any:
        try:
            from .constrained import ActionGrammar, llguidance_tokenizer

            if self._ll_tokenizer is None:
                self._ll_tokenizer = llguidance_tokenizer(self.tokenizer, self.vocab_size)
        except ImportError:
            raise ModelLoadError(
                "constrained decoding needs llguidance: pip install 'counterfoil[mlx]', "
                "or turn it off with --no-constrain"
            ) from None
        return ActionGrammar(
            self.tokenizer,
            self.vocab_size,
            available_tools,
            allowed_commands,
            ll_tokenizer=self._ll_tokenizer,
            mcp_tools=mcp_tools,
            view=view,
        )


def _vocab_size(config: dict[str, Any], tokenizer: Any) -> int:
    for section in (config, config.get("text_config") or {}):
        size = section.get("vocab_size")
        if isinstance(size, int) and size > 0:
            return size
    return len(tokenizer)


def _context_window(config: dict[str, Any]) -> int | None:
    """The positions the model was trained for, as its config states them (None: unstated)."""
    for section in (config, config.get("text_config") or {}):
        size = section.get("max_position_embeddings")
        if isinstance(size, int) and size > 0:
            return size
    return None


_loaded: dict[tuple[str, str | None, bool], LoadedModel] = {}
_load_lock = threading.Lock()


def load_model(
    spec: str,
    *,
    device: str | None = None,
    on_progress: ProgressCallback | None = None,
    fast_cpu: bool = True,
) -> LoadedModel:
    """Load `spec` once per device; later calls return the same weights.

    On a CPU, quantized weights are dequantized to float32 unless `fast_cpu` is False (see
    `counterfoil.models.mlx.cpu_path`); `LoadedModel.compute` says which path was taken.

    Only the most recently loaded model is kept here, so switching models (a settings change
    in the daemon) does not hold two sets of weights once the old callables are gone.
    """
    source = resolve_model(spec)
    if device not in (None, "cpu", "gpu"):
        raise ModelLoadError(f"unknown device {device!r}: use cpu or gpu")
    key = (source.location, device, fast_cpu)
    with _load_lock:
        loaded = _loaded.get(key)
        if loaded is None:
            _report(on_progress, ModelProgress("loading", message=f"loading {source.location}"))
            try:
                loaded = _load(source, device, on_progress, fast_cpu)
            except ModelLoadError as error:
                _report(on_progress, ModelProgress("error", message=str(error)))
                raise
            _loaded.clear()
            _loaded[key] = loaded
    _report(on_progress, ModelProgress("ready", message=f"{source.spec} ready"))
    return loaded


def _load(
    source: ModelSource,
    device: str | None,
    on_progress: ProgressCallback | None = None,
    fast_cpu: bool = True,
) -> LoadedModel:
    try:
        import mlx.core as mx
        from mlx_lm import load
    except ImportError:
        raise ModelLoadError(
            "MLX is not installed: pip install 'counterfoil[mlx]' "
            "(mlx on Apple silicon, mlx[cpu] or mlx[cuda] on Linux)"
        ) from None
    stream = None
    if device is not None:
        target = mx.cpu if device == "cpu" else mx.gpu
        if not mx.is_available(target):
            raise ModelLoadError(
                f"this MLX build has no {device.upper()} backend; use --device cpu, "
                "or install mlx (Apple silicon) or mlx[cuda] (NVIDIA)"
            )
        mx.set_default_device(target)
        stream = mx.new_stream(target)
    location = source.location
    gguf_sha256 = None
    if source.gguf:
        from ..gguf.gguf_import import import_gguf

        imported = import_gguf(source.location, on_progress=on_progress)
        location, gguf_sha256 = str(imported.folder), imported.sha256
    try:
        result: Any = load(location, return_config=True)
        model, tokenizer, config = result
    except Exception as error:  # noqa: BLE001 - mlx-lm and huggingface_hub raise many kinds
        raise ModelLoadError(
            load_failure(source.spec, source.location, source.is_local, error)
        ) from None
    from .cpu_path import use_fast_cpu_path

    loaded = LoadedModel(source, model, tokenizer, config, stream)
    loaded.compute = use_fast_cpu_path(model, dequantize=fast_cpu)
    loaded.gguf_sha256 = gguf_sha256
    loaded.folder = location if source.is_local else _snapshot(location)
    return loaded


def _snapshot(repo_id: str) -> str | None:
    from ..hub.download import local_snapshot

    try:
        snapshot = local_snapshot(repo_id)
    except Exception:  # noqa: BLE001 - the identity then names the repo without a revision
        return None
    return None if snapshot is None else str(snapshot)


def _report(on_progress: ProgressCallback | None, progress: ModelProgress) -> None:
    if on_progress is not None:
        on_progress(progress)


class MLXGenerate:
    """`generate(messages) -> str` over a loaded model, keeping its KV cache across turns.

    Returns only the action text: a `<think>…</think>` block is reported to `on_progress`
    (token by token, as `ModelProgress.text`) but not returned. `stats` holds one
    `ResponseStats` per call. `configure_tools` (called by `run_agent`) narrows the
    constrained grammar to the tools the workspace enables.
    """

    def __init__(
        self,
        loaded: LoadedModel,
        options: GenerationOptions | None = None,
        *,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        from mlx_lm.sample_utils import make_sampler

        from .prompt_cache import PromptCache
        from .prompt_lookup import LookupStats

        self.loaded = loaded
        self.options = options or GenerationOptions()
        self.on_progress = on_progress
        self.grammar: Any = None
        self._grammar_tools: (
            tuple[
                frozenset[str] | None,
                tuple[tuple[str, ...], ...],
                str | None,
                WorkspaceView | None,
            ]
            | None
        ) = None
        if self.options.constrain:
            self.configure_tools(self.options.available_tools, self.options.allowed_commands)
        self.sampler = make_sampler(temp=0.0)
        self.prompt_cache = PromptCache(loaded.model)
        self.stats: list[ResponseStats] = []
        self.lookup_stats = LookupStats()
        self._json_source_cache: dict[str, list[list[int]]] = {}

    @property
    def max_tokens(self) -> int:
        return self.options.max_tokens

    def configure_tools(
        self,
        available_tools: Iterable[str] | None,
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        """Constrain later responses to these tools and commands, an `mcp_call` to the approved
        MCP tools under their input schemas, paths, edits and rewrites to what `view` shows
        (rebuilt only on a change). A server's schema the grammar compiler cannot take leaves
        an `mcp_call`'s arguments any object: the server and the person still see them."""
        self.options = self.options.with_tools(available_tools, allowed_commands)
        if not self.options.constrain:
            return
        tools, commands = self.options.available_tools, self.options.allowed_commands
        listed = None if mcp_tools is None else canonical_json(list(mcp_tools))
        wanted = (tools, commands, listed, view)
        if wanted != self._grammar_tools:
            try:
                self.grammar = self.loaded.action_grammar(tools, commands, mcp_tools, view)
            except (ValueError, RuntimeError, TypeError):
                if mcp_tools is None:
                    raise
                self.grammar = self.loaded.action_grammar(tools, commands, view=view)
            self._grammar_tools = wanted

    def identity(self) -> ModelIdentity:
        """Which model this is, for the run's record, each receipt and each eval row."""
        from ..identity import mlx_identity

        return mlx_identity(self)

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        tokens = self.loaded.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, enable_thinking=self.options.enable_thinking
        )
        return [int(token) for token in tokens]

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        """The prompt's length in this model's tokens, chat template included."""
        return len(self.prompt_tokens(messages))

    @property
    def context_tokens(self) -> int | None:
        """The prompt tokens a run may use: the context window less room for one response."""
        window = self.loaded.context_window
        return None if window is None else prompt_budget(window, self.max_tokens)

    def _json_sources(self, messages: list[dict[str, str]]) -> list[list[int]]:
        """The messages' texts as tokens of them inside a JSON string, for prompt lookup;
        each text tokenized once while it stays in the conversation."""
        from .prompt_lookup import json_string_sources

        tokenizer = self.loaded.tokenizer
        known = self._json_source_cache
        kept: dict[str, list[list[int]]] = {}
        for message in messages:
            text = message.get("content", "")
            if text not in kept:
                kept[text] = known.get(text) or json_string_sources(
                    lambda escaped: list(tokenizer.encode(escaped, add_special_tokens=False)),
                    [text],
                )
        self._json_source_cache = kept
        return [source for sources in kept.values() for source in sources]

    def __call__(self, messages: list[dict[str, str]]) -> str:
        return self.reply(messages).text

    def reply(self, messages: list[dict[str, str]]) -> ModelReply:
        """The response's text with what it cost, as one value."""
        with self.loaded.lock:
            return self._generate(messages)

    def _generate(self, messages: list[dict[str, str]]) -> ModelReply:
        import mlx.core as mx
        from mlx_lm import stream_generate

        from .prompt_lookup import stream_generate_with_lookup

        started = time.perf_counter()
        prompt = self.prompt_tokens(messages)
        if not self.options.reuse_prompt_cache:
            self.prompt_cache.reset()
        suffix = self.prompt_cache.prefill_suffix(prompt)
        processors = (
            [self.grammar.processor(self.max_tokens, allow_thinking=self.options.enable_thinking)]
            if self.grammar is not None
            else None
        )
        options: dict[str, Any] = {}
        if self.loaded.stream is not None:
            options["stream"] = self.loaded.stream
        generated: list[int] = []
        finish_reason = "length"
        last: Any = None
        _report(self.on_progress, ModelProgress("generating", message="prefilling"))
        prefill_seconds = 0.0
        decode: Callable[..., Iterator[Any]] = stream_generate
        if self.options.prompt_lookup:  # drafts from the conversation; see prompt_lookup.py
            decode = stream_generate_with_lookup(
                prompt, self.lookup_stats, sources=self._json_sources(messages)
            )
        try:
            rest, _ = prefill_in_chunks(
                self.loaded.model,
                self.prompt_cache.cache,
                suffix,
                on_progress=self.on_progress,
                stream=self.loaded.stream,
            )
            for response in decode(
                self.loaded.model,
                self.loaded.tokenizer,
                mx.array(rest),
                max_tokens=self.max_tokens,
                sampler=self.sampler,
                logits_processors=processors,
                prompt_cache=self.prompt_cache.cache,
                **options,
            ):
                if not generated:
                    prefill_seconds = time.perf_counter() - started
                generated.append(int(response.token))
                last = response
                if response.finish_reason is not None:
                    finish_reason = response.finish_reason
                progress = _counters("generating", response, len(suffix), response.text)
                _report(self.on_progress, progress)
        except BaseException:
            self.prompt_cache.reset()
            _report(self.on_progress, ModelProgress("ready", message="generation stopped"))
            raise
        self.prompt_cache.record(prompt, generated)
        seconds = time.perf_counter() - started
        stats = ResponseStats(
            prompt_tokens=len(prompt),
            prefilled_tokens=len(suffix),
            generated_tokens=len(generated),
            finish_reason=finish_reason,
            seconds=seconds,
            prefill_seconds=prefill_seconds,
            token_ids=tuple(generated),
        )
        self.stats.append(stats)
        done = _counters("ready", last, len(suffix)) if last is not None else ModelProgress("ready")
        _report(self.on_progress, done)
        return ModelReply(self.action_text(generated), stats)

    # The checkpoint protocol (see counterfoil.sessions): the state is the cached token prefix
    # and each layer's offset; the KV tensors themselves go to a file beside the checkpoint.

    def save_checkpoint(self, messages: list[dict[str, str]]) -> ModelCheckpoint:
        tokens = tuple(self.prompt_cache.tokens)
        offsets = self.prompt_cache.layer_offsets()
        if not offsets or any(offset != len(tokens) for offset in offsets):
            tokens, offsets = (), (0,)
        return ModelCheckpoint(len(messages), len(self.stats), tokens, offsets)

    def restore_checkpoint(self, checkpoint: ModelCheckpoint) -> None:
        """Nothing to restore without the KV file (`read_prompt_cache`): the conversation is
        prefilled again."""

    def prompt_cache_bytes(self) -> int:
        return sum(int(getattr(layer, "nbytes", 0)) for layer in self.prompt_cache.cache)

    def write_prompt_cache(self, path: str) -> None:
        with self.loaded.lock:
            self.prompt_cache.save(path)

    def read_prompt_cache(self, path: str, tokens: Sequence[int]) -> None:
        with self.loaded.lock:
            self.prompt_cache.load(path, tokens)

    def action_text(self, generated: Sequence[int]) -> str:
        """The response without EOS and without any thinking block."""
        tokenizer = self.loaded.tokenizer
        eos = tokenizer.eos_token_ids
        tokens = [token for token in generated if token not in eos]
        return strip_thinking(str(tokenizer.decode(tokens)))


def _counters(
    state: Literal["generating", "ready"], response: Any, prefilled: int, text: str = ""
) -> ModelProgress:
    """A report from mlx-lm's own counters on a `GenerationResponse`; `prefilled` is the
    prompt tokens this response prefilled (mlx-lm saw only the last of them: the others were
    prefilled in chunks before it)."""
    tokens = int(response.generation_tokens)
    return ModelProgress(
        state,
        message=f"{tokens} tokens" if state == "ready" else "",
        tokens=tokens,
        tokens_per_second=float(response.generation_tps) or None,
        prompt_tokens=prefilled,
        text=text,
    )


def load_mlx_generate(
    spec: str,
    options: GenerationOptions | None = None,
    *,
    on_progress: ProgressCallback | None = None,
) -> MLXGenerate:
    """Load `spec` (a short name, repo id or local directory) and return its generate callable.

    Raises `ModelLoadError` with a one-line, actionable message when MLX, the model or its
    download is missing.
    """
    options = options or GenerationOptions()
    loaded = load_model(spec, device=options.device, on_progress=on_progress)
    return MLXGenerate(loaded, options, on_progress=on_progress)

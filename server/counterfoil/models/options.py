"""How a model generates, as one typed value that is also the daemon's cache key."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from .engine_choice import LLAMA_CPP, engine_for
from .server.endpoint import EndpointOptions

if TYPE_CHECKING:
    from ..settings.table import Settings

Device = Literal["cpu", "gpu"]
LLAMA_CPP_CONTEXT_TOKENS = 16_384  # llama.cpp's window unless `contextTokens` says otherwise


@dataclass(frozen=True)
class LlamaCppOptions:
    """A GGUF run by llama.cpp (`counterfoil.models.llamacpp.llamacpp`) rather than MLX: its context
    window (at most the model's trained one) and threads (None: the CPUs this process may use)."""

    context_tokens: int = LLAMA_CPP_CONTEXT_TOKENS
    threads: int | None = None


@dataclass(frozen=True)
class GenerationOptions:
    """Options of `load_generate` (scripted models ignore them).

    `available_tools=None` lets the constrained grammar spell every tool until the agent loop
    says which are enabled (`configure_tools`); `reuse_prompt_cache=False` re-prefills every
    turn (a baseline for benchmarks); `prompt_lookup=False` decodes without drafting from the
    conversation (`counterfoil.models.mlx.prompt_lookup`). `endpoint` set: the model runs on
    that OpenAI-compatible server (`counterfoil.models.server.remote`); else `llama_cpp` set:
    the GGUF file runs on a llama.cpp server Counterfoil starts
    (`counterfoil.models.llamacpp.llamacpp`). Hashable: equal options mean an equal model.
    """

    max_tokens: int = 1024
    enable_thinking: bool = False
    device: Device | None = None
    constrain: bool = True
    available_tools: frozenset[str] | None = None
    allowed_commands: tuple[tuple[str, ...], ...] = ()
    reuse_prompt_cache: bool = True
    prompt_lookup: bool = True
    endpoint: EndpointOptions | None = None
    llama_cpp: LlamaCppOptions | None = None

    def __post_init__(self) -> None:
        tokens = self.max_tokens
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
            raise ValueError("max_tokens must be a positive integer")
        if self.device not in (None, "cpu", "gpu"):
            raise ValueError(f"unknown device {self.device!r}: use cpu or gpu")
        if self.available_tools is not None:
            object.__setattr__(self, "available_tools", frozenset(self.available_tools))
        object.__setattr__(
            self, "allowed_commands", tuple(tuple(argv) for argv in self.allowed_commands)
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> GenerationOptions:
        """What the person's settings say about generation (tools come from the agent loop)."""
        return cls(
            max_tokens=settings.max_tokens,
            constrain=settings.constrained_decoding,
            prompt_lookup=settings.prompt_lookup,
            allowed_commands=settings.allowed_commands,
            endpoint=(
                EndpointOptions(
                    url=settings.endpoint,
                    api_key_env=settings.api_key_env,
                    allow_insecure_http=settings.allow_insecure_http,
                    use_environment_proxy=settings.use_environment_proxy,
                    schema_mode=settings.schema_mode,
                    timeout_seconds=settings.endpoint_timeout_seconds,
                )
                if settings.endpoint
                else None
            ),
            llama_cpp=(
                LlamaCppOptions(context_tokens=settings.context_tokens or LLAMA_CPP_CONTEXT_TOKENS)
                if engine_for(settings.model, settings.engine, endpoint=settings.endpoint)
                == LLAMA_CPP
                else None
            ),
        )

    def with_tools(
        self, available_tools: Iterable[str] | None, allowed_commands: Sequence[Sequence[str]]
    ) -> GenerationOptions:
        tools = None if available_tools is None else frozenset(available_tools)
        commands = tuple(tuple(argv) for argv in allowed_commands)
        return replace(self, available_tools=tools, allowed_commands=commands)

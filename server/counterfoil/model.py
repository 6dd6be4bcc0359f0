"""The model contract: what `run_agent`, the CLI and the daemon may ask of a model.

The tiny-llm course's loop takes any `generate(messages) -> str`; a `Model` is that callable
and also says what it costs (`stats`, one `ResponseStats` per response), counts a prompt in its
own tokens, states its context window, and narrows its output to the tools a run enables. The
scripted, MLX and remote models implement it; a plain callable still works where it is taken.

Each of them answers one call with one value too (`reply`: a `ModelReply`, the text with what
it cost and the model's remark on it), as mlx-lm's step yields a `GenerationResponse`; the loop
reads a response's figures from that value (`model_reply`), never from the model's counters
afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .workspace_view import WorkspaceView

Messages = list[dict[str, str]]
# The approved MCP tools a run offers, each `{"server", "name", "description", "input_schema"}`.
McpListings = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class ResponseStats:
    """What one response cost, from the model's own counters (None where it did not say).

    A local model knows how much of the prompt it prefilled (`prefilled_tokens`; the rest its
    cache reused); a server says how many prompt tokens its cache served (`cached_tokens`).
    """

    generated_tokens: int
    finish_reason: str
    seconds: float
    prompt_tokens: int | None = None
    prefilled_tokens: int | None = None
    cached_tokens: int | None = None
    prefill_seconds: float | None = None
    first_token_seconds: float | None = None
    attempts: int = 1
    token_ids: tuple[int, ...] = ()

    @property
    def reused_tokens(self) -> int | None:
        """Prompt tokens a cache served: a server's count, or the prompt less what was
        prefilled; None where neither was reported."""
        if self.cached_tokens is not None:
            return self.cached_tokens
        if self.prompt_tokens is not None and self.prefilled_tokens is not None:
            return self.prompt_tokens - self.prefilled_tokens
        return None


@dataclass(frozen=True)
class ModelReply:
    """One response: its text, what it cost (`stats`; None from a model that does not count)
    and the model's remark on it (`note`: a server that does not enforce the schema, the prompt
    tokens its cache served)."""

    text: str
    stats: ResponseStats | None = None
    note: str = ""


@runtime_checkable
class Replies(Protocol):
    """A model that answers a call with its `ModelReply`; calling it gives the text alone."""

    def reply(self, messages: Messages) -> ModelReply: ...


def model_reply(generate: Callable[[Messages], str], messages: Messages) -> ModelReply:
    """One response as a value: the model's own `reply`, or, from a plain callable (or a model
    whose call was redefined below its `reply`, which is then taken at its word), its text."""
    if isinstance(generate, Replies) and _replies_itself(generate):
        return generate.reply(messages)
    return ModelReply(generate(messages))


def _replies_itself(model: Replies) -> bool:
    """Whether `model.reply` is as specific as its call (a subclass that redefines only
    `__call__` changes what a call answers)."""
    if "__call__" in getattr(model, "__dict__", {}):
        return False
    classes = type(model).__mro__

    def defined(name: str) -> int:
        return next((at for at, kind in enumerate(classes) if name in vars(kind)), len(classes))

    return defined("reply") <= defined("__call__")


@runtime_checkable
class ConfiguresTools(Protocol):
    """The one part of the contract a plain generate callable may also have: narrowing its
    output to a run's tools and, turn by turn, to what its workspace has shown (a wrapper
    passes the call on only to a model that has it)."""

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        """Narrow later responses to these tools and commands, an `mcp_call` to the run's
        approved MCP tools under their input schemas, and, with `view` (what the workspace has
        shown the model; given again each turn), paths, edits and rewrites to what it saw (a
        no-op for most models)."""


@runtime_checkable
class Model(ConfiguresTools, Protocol):
    """A generate callable with its counters, its token count and its context window, and
    the tools it narrows its output to (`ConfiguresTools`)."""

    @property
    def stats(self) -> Sequence[ResponseStats]:
        """One entry per response so far, in order."""

    def __call__(self, messages: Messages) -> str: ...

    def count_tokens(self, messages: Messages) -> int:
        """The prompt's length in this model's tokens (an estimate where it cannot count)."""

    @property
    def context_tokens(self) -> int | None:
        """The prompt tokens a run may use, or None when the model does not say."""


class WrappedModel:
    """A model around another that changes only what a call does (a subclass redefines
    `reply`): its counters, token count, context window and tools are the wrapped model's."""

    def __init__(self, wrapped: Model) -> None:
        self.wrapped = wrapped

    def reply(self, messages: Messages) -> ModelReply:
        return model_reply(self.wrapped, messages)

    def __call__(self, messages: Messages) -> str:
        return self.reply(messages).text

    @property
    def stats(self) -> Sequence[ResponseStats]:
        return self.wrapped.stats

    @property
    def context_tokens(self) -> int | None:
        return self.wrapped.context_tokens

    def count_tokens(self, messages: Messages) -> int:
        return self.wrapped.count_tokens(messages)

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        configure(self.wrapped, available_tools, allowed_commands, mcp_tools, view)


def configure(
    model: ConfiguresTools,
    available_tools: frozenset[str],
    allowed_commands: Sequence[Sequence[str]],
    mcp_tools: McpListings | None,
    view: WorkspaceView | None = None,
) -> None:
    """Tell `model` a run's tools, and what its workspace has shown (`view`)."""
    model.configure_tools(available_tools, allowed_commands, mcp_tools=mcp_tools, view=view)

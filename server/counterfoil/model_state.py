"""What a model reports of its own state, in the model contract's terms: the cache it saves at
a checkpoint and restores on resume (`ModelCheckpoint`), and how much of a shared prefix a
branch's generator reused (`PrefixReuse`). The models produce them and the sessions and
branches keep them, so they live beside the model contract, below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import AgentError


@dataclass(frozen=True)
class ModelCheckpoint:
    """What a model needs to continue exactly: how many messages its cache covers, which
    scripted response comes next, and the cached token prefix with each layer's offset."""

    conversation_position: int
    response_index: int
    cached_token_ids: tuple[int, ...]
    layer_offsets: tuple[int, ...]

    def __post_init__(self) -> None:
        if not all(_natural(value) for value in (self.conversation_position, self.response_index)):
            raise AgentError("checkpoint positions must be non-negative integers")
        if not all(_natural(token) for token in self.cached_token_ids):
            raise AgentError("cached token ids must be non-negative integers")
        if not self.layer_offsets or not all(_natural(offset) for offset in self.layer_offsets):
            raise AgentError("checkpoint needs non-negative layer offsets")
        if any(offset != len(self.cached_token_ids) for offset in self.layer_offsets):
            raise AgentError("layer offsets must match the cached token prefix")

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversation_position": self.conversation_position,
            "response_index": self.response_index,
            "cached_token_ids": list(self.cached_token_ids),
            "layer_offsets": list(self.layer_offsets),
        }

    @classmethod
    def from_dict(cls, value: Any) -> ModelCheckpoint:
        try:
            return cls(
                value["conversation_position"],
                value["response_index"],
                tuple(value["cached_token_ids"]),
                tuple(value["layer_offsets"]),
            )
        except (KeyError, TypeError) as error:
            raise AgentError("model checkpoint is invalid") from error


@dataclass(frozen=True)
class PrefixReuse:
    """The token and cache positions one continuation reused instead of prefilling."""

    reused_tokens: int
    layer_offsets: tuple[int, ...]
    avoided_prefill_tokens: int


def _natural(value: object) -> bool:
    return type(value) is int and value >= 0

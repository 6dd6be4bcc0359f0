"""One conversation boundary and the model state that goes with it (the tiny-llm course's Day 4).

A checkpoint is taken only after a complete observation (the assistant's action and its tool
result both appended), so a fresh model restored from it cannot mistake an effect that ran for
one still to run. The identity is a content digest: it catches an accidental mismatch, not a
deliberate forgery.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import AgentError
from ..model_state import ModelCheckpoint

MESSAGE_ROLES = frozenset({"system", "user", "assistant"})


@dataclass(frozen=True)
class AgentCheckpoint:
    """The task, the semantic messages up to one complete observation, and the model state."""

    checkpoint_id: str
    task: str
    messages: tuple[tuple[str, str], ...]
    model: ModelCheckpoint

    def validate(self) -> None:
        """Refuse a checkpoint whose content, shape or conversation position is off."""
        if not isinstance(self.task, str) or not self.task.strip():
            raise AgentError("checkpoint task must not be empty")
        if not self.messages or not all(_is_message(message) for message in self.messages):
            raise AgentError("checkpoint messages are invalid")
        if not isinstance(self.model, ModelCheckpoint):
            raise AgentError("model checkpoint is invalid")
        if self.model.conversation_position != len(self.messages):
            raise AgentError("model checkpoint does not match the conversation")
        if self.checkpoint_id != checkpoint_digest(self.task, self.messages, self.model):
            raise AgentError("checkpoint identity does not match its content")

    def message_list(self) -> list[dict[str, str]]:
        """A fresh mutable copy of the messages, in the loop's form."""
        return [{"role": role, "content": content} for role, content in self.messages]


@runtime_checkable
class SavesCheckpoints(Protocol):
    """A generate callable that can describe its state at a boundary."""

    def save_checkpoint(self, messages: list[dict[str, str]]) -> ModelCheckpoint: ...


@runtime_checkable
class RestoresCheckpoints(Protocol):
    """A fresh generate callable that can take a saved state before its first call."""

    def restore_checkpoint(self, checkpoint: ModelCheckpoint) -> None: ...


@runtime_checkable
class KeepsPromptCache(Protocol):
    """A model whose KV cache can be written beside a checkpoint and read back, so a resume
    prefills only what is new (mlx-lm's `save_prompt_cache` / `load_prompt_cache`)."""

    def prompt_cache_bytes(self) -> int: ...

    def write_prompt_cache(self, path: str) -> None: ...

    def read_prompt_cache(self, path: str, tokens: Sequence[int]) -> None: ...


def prompt_cache_name(tokens: Sequence[int]) -> str:
    """The file of a KV cache, keyed by the SHA-256 of the token prefix it holds."""
    digest = hashlib.sha256(",".join(str(token) for token in tokens).encode()).hexdigest()
    return f"prompt-cache-{digest}.safetensors"


def checkpoint_digest(
    task: str, messages: tuple[tuple[str, str], ...], model: ModelCheckpoint
) -> str:
    """SHA-256 of the canonical JSON of the task, the messages and the model fields."""
    payload = {
        "task": task,
        "messages": [list(message) for message in messages],
        "model": model.to_dict(),
    }
    encoded = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()


def create_checkpoint(
    task: str, messages: Sequence[dict[str, str]], model: ModelCheckpoint
) -> AgentCheckpoint:
    """Freeze the messages into `(role, content)` pairs and bind them to the model state."""
    if not isinstance(model, ModelCheckpoint):
        raise AgentError("model checkpoint is invalid")
    try:
        frozen = tuple((message["role"], message["content"]) for message in messages)
    except (KeyError, TypeError) as error:
        raise AgentError("checkpoint messages are invalid") from error
    checkpoint = AgentCheckpoint(checkpoint_digest(task, frozen, model), task, frozen, model)
    checkpoint.validate()
    return checkpoint


def save_model_state(generate: object, messages: list[dict[str, str]]) -> ModelCheckpoint:
    """The model's state at a boundary; a model without the protocol is a clear error."""
    if not isinstance(generate, SavesCheckpoints):
        raise AgentError("generator does not support checkpoints")
    state = generate.save_checkpoint(messages)
    if not isinstance(state, ModelCheckpoint):
        raise AgentError("generator returned an invalid model checkpoint")
    return state


def restore_model_state(generate: object, state: ModelCheckpoint) -> None:
    if not isinstance(generate, RestoresCheckpoints):
        raise AgentError("generator does not support checkpoint restore")
    generate.restore_checkpoint(state)


def _is_message(message: object) -> bool:
    return (
        isinstance(message, tuple)
        and len(message) == 2
        and message[0] in MESSAGE_ROLES
        and isinstance(message[1], str)
    )

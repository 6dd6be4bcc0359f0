"""Greedy generation from one saved KV prefix shared by every branch (the tiny-llm course's
Day 8 `KvPrefixGenerator`), over mlx-lm models and their caches.

The checkpoint's messages are rendered and prefilled once; each fork gets fresh cache objects
holding the same frozen prefix arrays, so a branch prefills only its own suffix and a growing
branch never writes into its sibling's prefix (a cache that grows concatenates new arrays).
The steered prompt must extend the saved tokens exactly: reuse is bound to content, not to a
position. A model written in the course's dense-cache convention (`num_hidden_layers`, called
with tokens, offset and caches) runs the same way over `DenseKvCache`. MLX is imported only
when a prefix is prefilled or a response generated.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import AgentError
from ...model_state import ModelCheckpoint, PrefixReuse

Message = dict[str, str]


class DenseKvCache:
    """One layer's keys and values, replaced (never written in place) as they grow."""

    def __init__(self) -> None:
        self.key_values: tuple[Any, Any] | None = None
        self.offset = 0

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        import mlx.core as mx

        if self.key_values is not None:
            old_keys, old_values = self.key_values
            keys = mx.concatenate([old_keys, keys], axis=2)
            values = mx.concatenate([old_values, values], axis=2)
        self.key_values = (keys, values)
        self.offset = int(keys.shape[2])
        return self.key_values

    def materialize(self) -> None:
        import mlx.core as mx

        if self.key_values is not None:
            mx.eval(*self.key_values)


class KvPrefixGenerator:
    """A generate callable whose every response continues one frozen, prefilled prefix."""

    def __init__(
        self, model: Any, tokenizer: Any, max_tokens: int, enable_thinking: bool = False
    ) -> None:
        if type(max_tokens) is not int or max_tokens <= 0:
            raise ValueError("max_tokens must be a positive integer")
        if type(enable_thinking) is not bool:
            raise ValueError("enable_thinking must be a boolean")
        self._mlx_lm = hasattr(model, "layers")  # an mlx-lm model; else the course's convention
        if not self._mlx_lm:
            layers = getattr(model, "num_hidden_layers", None)
            if type(layers) is not int or layers <= 0:
                raise ValueError("model must expose a positive num_hidden_layers")
        self._model = model
        self._tokenizer = tokenizer
        self._max_tokens = max_tokens
        self._enable_thinking = enable_thinking
        self._response_index = 0
        self._checkpoint: ModelCheckpoint | None = None
        self._prefix_tokens: tuple[int, ...] = ()
        self._prefix_state: tuple[Any, ...] = ()
        self._restored = False
        self._reuse = PrefixReuse(0, (), 0)

    @property
    def reuse(self) -> PrefixReuse:
        """What the latest continuation reused of the saved prefix."""
        return self._reuse

    def save_checkpoint(self, messages: list[Message]) -> ModelCheckpoint:
        """Render and prefill the checkpoint's messages, once."""
        if self._checkpoint is not None:
            raise AgentError("prefix checkpoint was already saved")
        token_ids = self._encode(self._render(messages, add_generation_prompt=False))
        if not token_ids:
            raise AgentError("checkpoint prompt must contain at least one token")
        caches = self._new_caches()
        self._forward(token_ids, 0, caches)
        self._prefix_state = self._freeze(caches)
        offsets = tuple(int(cache.offset) for cache in caches)
        self._prefix_tokens = token_ids
        checkpoint = ModelCheckpoint(len(messages), self._response_index, token_ids, offsets)
        self._checkpoint = checkpoint
        self._reuse = PrefixReuse(len(token_ids), offsets, len(token_ids))
        return checkpoint

    def restore_checkpoint(self, checkpoint: ModelCheckpoint) -> None:
        """Bind this generator to its saved prefix; a checkpoint of another prefix is refused."""
        if not isinstance(checkpoint, ModelCheckpoint):
            raise AgentError("model checkpoint is invalid")
        if self._checkpoint is None or checkpoint != self._checkpoint:
            raise AgentError("model checkpoint does not match the saved KV prefix")
        self._response_index = checkpoint.response_index
        self._restored = True

    def fork(self) -> KvPrefixGenerator:
        """A fresh generator sharing only the immutable prefix arrays."""
        if self._checkpoint is None:
            raise AgentError("save a prefix checkpoint before forking")
        branch = KvPrefixGenerator.__new__(KvPrefixGenerator)
        branch.__dict__.update(self.__dict__)
        branch._response_index = self._checkpoint.response_index
        branch._restored = False
        return branch

    def __call__(self, messages: list[Message]) -> str:
        import mlx.core as mx

        if not self._restored or self._checkpoint is None:
            raise AgentError("restore the checkpoint before generating")
        token_ids = self._encode(self._render(messages, add_generation_prompt=True))
        size = len(self._prefix_tokens)
        if token_ids[:size] != self._prefix_tokens:
            raise AgentError("steered prompt does not extend the saved token prefix")
        suffix = token_ids[size:]
        if not suffix:
            raise AgentError("steered prompt must add tokens after the saved prefix")
        caches = self._thawed_caches()
        logits = self._forward(suffix, size, caches)
        offset = size + len(suffix)
        stop = self._stop_tokens()
        output: list[int] = []
        for _ in range(self._max_tokens):
            token = int(mx.argmax(logits, axis=-1).item())  # type: ignore[arg-type]
            if token in stop:
                break
            output.append(token)
            logits = self._forward((token,), offset, caches)
            offset += 1
        self._response_index += 1
        self._reuse = PrefixReuse(size, self._checkpoint.layer_offsets, size)
        return str(self._tokenizer.decode(output))

    # The two conventions: mlx-lm's (`model(tokens, cache=…)`) and the course's dense one

    def _new_caches(self) -> list[Any]:
        if self._mlx_lm:
            from mlx_lm.models.cache import make_prompt_cache

            return list(make_prompt_cache(self._model))
        return [DenseKvCache() for _ in range(self._model.num_hidden_layers)]

    def _forward(self, tokens: tuple[int, ...], offset: int, caches: list[Any]) -> Any:
        import mlx.core as mx

        inputs = mx.array(tokens)[None]
        if self._mlx_lm:
            logits = self._model(inputs, cache=caches)
        else:
            logits = self._model(inputs, offset, caches, logits_to_keep=1)
        logits = logits[:, -1, :]
        mx.eval(logits)
        return logits

    def _freeze(self, caches: list[Any]) -> tuple[Any, ...]:
        """The prefix as each branch will get it. mlx-lm's plain KVCache keeps spare room that
        a later update writes into in place, so only the exact prefix slices are kept (a
        branch's first update then grows new arrays); any other cache kind is copied whole
        per branch (still no prefill)."""
        import mlx.core as mx

        if not self._mlx_lm:
            for cache in caches:
                cache.materialize()
            if any(cache.key_values is None for cache in caches):
                raise AgentError("model did not populate every dense cache layer")
            return tuple((cache.key_values, cache.offset) for cache in caches)
        from mlx_lm.models.cache import KVCache

        if all(type(cache) is KVCache for cache in caches):
            frozen = tuple(
                (cache.keys[..., : cache.offset, :], cache.values[..., : cache.offset, :])
                for cache in caches
            )
            mx.eval([array for pair in frozen for array in pair])
            return frozen
        mx.eval([cache.state for cache in caches])
        return (caches,)

    def _thawed_caches(self) -> list[Any]:
        """Fresh cache objects over the frozen prefix arrays (shared, never written)."""
        if self._mlx_lm:
            from mlx_lm.models.cache import KVCache

            if len(self._prefix_state) == 1 and isinstance(self._prefix_state[0], list):
                return list(copy.deepcopy(self._prefix_state[0]))
            shared: list[Any] = []
            for keys, values in self._prefix_state:
                layer = KVCache()
                layer.keys, layer.values, layer.offset = keys, values, int(keys.shape[2])
                shared.append(layer)
            return shared
        dense = [DenseKvCache() for _ in self._prefix_state]
        for cache, (key_values, offset) in zip(dense, self._prefix_state, strict=True):
            cache.key_values, cache.offset = key_values, offset
        return list(dense)

    def _stop_tokens(self) -> frozenset[int]:
        ids = getattr(self._tokenizer, "eos_token_ids", None)
        if ids:
            return frozenset(int(token) for token in ids)
        return frozenset({int(self._tokenizer.eos_token_id)})

    def _render(self, messages: list[Message], *, add_generation_prompt: bool) -> str:
        try:
            prompt = self._tokenizer.apply_chat_template(
                messages,
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
                enable_thinking=self._enable_thinking,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise AgentError("could not render checkpoint messages") from error
        if not isinstance(prompt, str):
            raise AgentError("chat template must render text")
        return prompt

    def _encode(self, prompt: str) -> tuple[int, ...]:
        try:
            tokens = tuple(
                int(token) for token in self._tokenizer.encode(prompt, add_special_tokens=False)
            )
        except (TypeError, ValueError) as error:
            raise AgentError("tokenizer returned invalid token ids") from error
        if any(token < 0 for token in tokens):
            raise AgentError("tokenizer returned invalid token ids")
        return tokens

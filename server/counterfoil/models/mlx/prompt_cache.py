"""The KV cache kept across agent turns, so each turn prefills only what is new.

Every turn appends to the conversation, but re-applying the chat template does not
reproduce the cached tokens exactly (an earlier assistant turn is tokenised afresh and may
lose its thinking block), so reuse compares token ids: it keeps the longest common prefix
and trims the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class PromptCache:
    """An mlx-lm prompt cache plus the token ids it holds, in order."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.cache: list[Any] = []
        self.tokens: list[int] = []
        self.reset()

    def reset(self) -> None:
        from mlx_lm.models.cache import make_prompt_cache

        self.cache = make_prompt_cache(self._model)
        self.tokens = []

    @property
    def offset(self) -> int | None:
        """How many positions the KV cache holds, as the cache itself reports (None: unknown)."""
        if not self.cache:
            return None
        offset = getattr(self.cache[0], "offset", None)
        return offset if isinstance(offset, int) else None

    def prefill_suffix(self, prompt: Sequence[int]) -> list[int]:
        """Trim the cache to the longest prefix shared with `prompt`; return the rest.

        At least one token is always returned, since generation needs an input token: when
        the whole prompt is already cached, the cache backs off by one.
        """
        from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache
        from mlx_lm.utils import common_prefix_len

        prompt = list(prompt)
        if not prompt:
            raise ValueError("prompt must hold at least one token")
        if self.offset != len(self.tokens) or not can_trim_prompt_cache(self.cache):
            self.reset()
        keep = common_prefix_len(self.tokens, prompt)
        if keep == len(prompt):
            keep -= 1
        excess = len(self.tokens) - keep
        if excess > 0 and trim_prompt_cache(self.cache, excess) != excess:
            self.reset()
            keep = 0
        self.tokens = prompt[:keep]
        return prompt[keep:]

    def record(self, prompt: Sequence[int], generated: Sequence[int]) -> None:
        """After generation the cache holds the prompt and every generated token."""
        self.tokens = [*prompt, *generated]
        if self.offset != len(self.tokens):
            self.reset()

    def layer_offsets(self) -> tuple[int, ...]:
        """Each layer's offset, as its cache reports it (empty when one does not say)."""
        offsets = tuple(getattr(layer, "offset", None) for layer in self.cache)
        return offsets if all(isinstance(item, int) for item in offsets) else ()  # type: ignore[return-value]

    def save(self, path: str) -> None:
        """Write the KV cache with mlx-lm's `save_prompt_cache` (a `.safetensors` file)."""
        from mlx_lm.models.cache import save_prompt_cache

        save_prompt_cache(path, self.cache, {"tokens": str(len(self.tokens))})

    def load(self, path: str, tokens: Sequence[int]) -> None:
        """Take a cache written by `save` for exactly `tokens`; a file that does not hold
        that many positions is ignored, and the next prompt is prefilled whole."""
        from mlx_lm.models.cache import load_prompt_cache

        cache = load_prompt_cache(path)
        offsets = [getattr(layer, "offset", None) for layer in cache]
        if len(cache) != len(self.cache) or any(item != len(tokens) for item in offsets):
            return
        self.cache = cache
        self.tokens = list(tokens)

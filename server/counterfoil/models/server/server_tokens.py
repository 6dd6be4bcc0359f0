"""Counting a conversation's tokens for a model server, whose tokenizer is out of reach.

The server's `usage.prompt_tokens` for the last request is a real count of that prompt. A
conversation that only grew since is that count plus an estimate of what was added; one that
changed otherwise (an observation elided) is estimated afresh. Either estimate is scaled by
how the last prompt's estimate compared with the server's count.
"""

from __future__ import annotations

import math

from ...context.budget import Messages, estimate_tokens

# A server's count can be odd (a cached prompt reported as a few tokens); the scale is kept sane.
MIN_SCALE = 0.5
MAX_SCALE = 4.0


class ServerTokenCount:
    """`count(messages)`: the tokens a model server will count, from its last `usage`."""

    def __init__(self) -> None:
        self._seen: Messages = []
        self._prompt_tokens = 0

    def seen(self, messages: Messages, prompt_tokens: object) -> None:
        """Note the prompt the server just answered and the tokens it said it held."""
        if (
            isinstance(prompt_tokens, int)
            and not isinstance(prompt_tokens, bool)
            and prompt_tokens > 0
        ):
            self._seen = [dict(message) for message in messages]
            self._prompt_tokens = prompt_tokens

    def __call__(self, messages: Messages) -> int:
        if not self._seen:
            return estimate_tokens(messages)
        scale = self._prompt_tokens / max(estimate_tokens(self._seen), 1)
        scale = min(max(scale, MIN_SCALE), MAX_SCALE)
        known = len(self._seen)
        if messages[:known] == self._seen:
            added = messages[known:]
            return self._prompt_tokens + (math.ceil(scale * estimate_tokens(added)) if added else 0)
        return math.ceil(scale * estimate_tokens(messages))

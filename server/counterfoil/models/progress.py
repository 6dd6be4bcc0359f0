"""What a model reports while it loads and generates: one stream, for a terminal or a daemon.

While generating, a report follows every token: `text` is the token's text (a terminal prints
it), and the counters are mlx-lm's own (`GenerationResponse.prompt_tokens`,
`generation_tokens`, `generation_tps`), so no reader counts tokens itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

ModelState = Literal["unloaded", "loading", "ready", "generating", "error"]

# A rate is shown only over at least this many tokens and this many seconds: a one-token step's
# "rate" is one decode's time inverted (30,000 tokens/s), and a 10 ms prefill's is noise.
RATE_MIN_TOKENS = 8
RATE_MIN_SECONDS = 0.5


def meaningful_rate(tokens: int | None, rate: float | None) -> float | None:
    """`rate` (tokens a second over `tokens` tokens) when the span is long enough to mean
    something, else None."""
    if not tokens or not rate or rate <= 0:
        return None
    if tokens < RATE_MIN_TOKENS or tokens / rate < RATE_MIN_SECONDS:
        return None
    return rate


@dataclass(frozen=True)
class ModelProgress:
    state: ModelState
    message: str = ""
    tokens: int = 0  # generated so far in this response
    tokens_per_second: float | None = None  # generation rate
    prompt_tokens: int | None = None  # prompt tokens prefilled for this response
    text: str = ""  # the newest token's text, while generating
    note: str = ""  # a model server's remark on a finished response (cached prompt tokens)
    # While the prompt is prefilled (`tokens` 0): `prompt_tokens` done of `prefill_total`.
    prefill_total: int | None = None

    @property
    def shown_rate(self) -> float | None:
        """The rate to show a person: the prefill's or the generation's, over a span long
        enough to mean one (`meaningful_rate`)."""
        counted = self.prompt_tokens if self.prefill_total is not None else self.tokens
        return meaningful_rate(counted, self.tokens_per_second)


@dataclass(frozen=True)
class PrefillReport:
    """A prompt's prefill so far: `done` of `total` tokens in `seconds` (chunks of a local
    model's, or a model server's own report)."""

    done: int
    total: int
    seconds: float

    @property
    def tokens_per_second(self) -> float | None:
        return self.done / self.seconds if self.seconds > 0 else None

    def message(self) -> str:
        rate = meaningful_rate(self.done, self.tokens_per_second)
        speed = f", {rate:.0f} tokens/s" if rate else ""
        return f"prefill {self.done:,}/{self.total:,} tokens{speed}"


ProgressCallback = Callable[[ModelProgress], None]

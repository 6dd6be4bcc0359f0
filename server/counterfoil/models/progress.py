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


ProgressCallback = Callable[[ModelProgress], None]

"""What a model reports while it loads and generates, for a status bar or a trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ModelState = Literal["unloaded", "loading", "ready", "generating", "error"]


@dataclass(frozen=True)
class ModelProgress:
    state: ModelState
    message: str = ""
    tokens: int = 0
    tokens_per_second: float | None = None

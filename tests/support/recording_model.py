"""A model for loop tests: it answers a script and keeps what it was shown on every call."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping

from counterfoil.context.budget import estimate_tokens


class RecordingModel:
    """Replays `responses` (text, or objects written as compact JSON) and keeps a copy of the
    messages of each call in `calls`. A `counterfoil.model.Model` (no counters, the estimated
    token count, no stated window), so the daemon can host it like any model."""

    stats: tuple[object, ...] = ()
    context_tokens: int | None = None

    def __init__(self, *responses: str | Mapping[str, object]) -> None:
        self.responses = [
            item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
            for item in responses
        ]
        self.calls: list[list[dict[str, str]]] = []

    def configure_tools(
        self,
        available_tools: object,
        allowed_commands: object,
        mcp_tools: object = None,
        view: object = None,
    ) -> None:
        pass

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return estimate_tokens(messages)

    def __call__(self, messages: list[dict[str, str]]) -> str:
        self.calls.append(copy.deepcopy(messages))
        return self.responses.pop(0)

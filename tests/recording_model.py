"""A model for loop tests: it answers a script and keeps what it was shown on every call."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping


class RecordingModel:
    """Replays `responses` (text, or objects written as compact JSON) and keeps a copy of the
    messages of each call in `calls`."""

    def __init__(self, *responses: str | Mapping[str, object]) -> None:
        self.responses = [
            item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
            for item in responses
        ]
        self.calls: list[list[dict[str, str]]] = []

    def __call__(self, messages: list[dict[str, str]]) -> str:
        self.calls.append(copy.deepcopy(messages))
        return self.responses.pop(0)

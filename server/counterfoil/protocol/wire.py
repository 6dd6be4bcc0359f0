"""The names every message module shares: the state words, and `wire`, which turns a message
into the JSON data the daemon sends."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from .. import receipt_fields as evidence

EffectState = Literal["approved", "rejected", "refused", "failed"]
Validation = Literal["passed", "failed", "not_run", "stale"]
RunStateName = Literal["running", "stopping", "pausing", "paused", "cancelled", "ended"]
ModelStateName = Literal["unloaded", "loading", "ready", "generating", "error"]
DownloadState = Literal["downloading", "done", "cancelled", "failed"]
# Where a call's question stands, as the daemon says it (`counterfoil/approvalState`): asked and
# waiting (again, after a resume), taken back by a pause, left when the editor went away, answered
# by the person, or denied without an answer (Stop, the confirm timeout).
ApprovalStateName = Literal["pending", "withdrawn", "interrupted", "answered", "denied"]
SessionStateName = Literal["interrupted", "paused", "discarded", "ended", "running", "unreadable"]
# What the model is doing for a run: loading (then loaded), and each step's prefill, generation
# and its end (generated).
ActivityPhase = Literal["loading", "loaded", "prefill", "generating", "generated"]

# A field sent only when it has a value: declared once, with the receipt's evidence, whose every
# fact is one.
SOMETIMES = evidence.SOMETIMES


def wire(message: Any) -> Any:
    """A message as the JSON data the daemon sends (dataclasses to objects, tuples to lists);
    a field marked SOMETIMES is left out when None, one the log alone keeps always."""
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        shown: dict[str, Any] = {}
        for item in dataclasses.fields(message):
            if item.metadata.get("log_only"):
                continue
            value = getattr(message, item.name)
            if value is None and item.metadata.get("sometimes"):
                continue
            shown[item.name] = wire(value)
        return shown
    if isinstance(message, (list, tuple)):
        return [wire(item) for item in message]
    if isinstance(message, dict):
        return {key: wire(value) for key, value in message.items()}
    return message

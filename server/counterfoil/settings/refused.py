"""The person's settings checked one by one: a bad value is refused alone.

One invalid value (`maxSteps: -5`, a malformed `endpoint`) must not reset the others (the
model chosen, the sandbox, the protected patterns, the grants): it keeps the person's last
valid value for that setting, or its default, and says which setting, what was wrong and what
is used instead. A refused value is not echoed (an `apiKeyEnv` that is a key is a secret).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, Literal

from .table import Settings, SettingsError

Fallback = Literal["yours", "default"]
# The settings that choose the model a run uses: one refused and left at its default would run
# a model the person did not choose.
MODEL_CHOICE = ("model", "engine", "endpoint")


@dataclass(frozen=True)
class RefusedSetting:
    """One of the person's values its check refused, and what the run uses instead."""

    key: str
    problem: str  # the check's words, after the key ("must be an integer from 1 to 10000")
    used: str  # the value used instead, as JSON text
    fallback: Fallback  # the person's last valid value, or the setting's default

    def what(self) -> str:
        """`maxSteps must be an integer from 1 to 10000`."""
        gap = "" if self.problem.startswith("[") else " "
        return f"{self.key}{gap}{self.problem}"

    def line(self) -> str:
        """`maxSteps must be …; using 40 (the default)`."""
        kept = "your last valid value" if self.fallback == "yours" else "the default"
        return f"{self.what()}; using {self.used} ({kept})"

    def record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "problem": self.problem,
            "used": self.used,
            "fallback": self.fallback,
        }


def shown(value: object) -> str:
    """A setting's value as JSON text, as the person writes it: a value with a record (the
    approval rules) as its record, an MCP server's entry as its fields."""

    def plain(item: object) -> object:
        as_record = getattr(item, "as_record", None)
        if callable(as_record):
            return as_record()
        if is_dataclass(item) and not isinstance(item, type):
            return asdict(item)
        return str(item)

    return json.dumps(value, default=plain)


def checked_one_by_one(
    raw: object, kept: Settings | None = None
) -> tuple[Settings, tuple[RefusedSetting, ...]]:
    """Settings from a mapping of setting keys, each bad value refused alone: it keeps its
    value in `kept` (the person's settings before), or the default. SettingsError only when
    `raw` is no mapping at all."""
    values, invalid = Settings.checked_values({} if raw is None else raw)
    refused: list[RefusedSetting] = []
    for item, problem in invalid:
        default = item.default
        before = default if kept is None else getattr(kept, item.name)
        if before != default:
            values[item.name] = before
        fallback: Fallback = "default" if before == default else "yours"
        refused.append(
            RefusedSetting(item.metadata["key"], problem.detail, shown(before), fallback)
        )
    return Settings(**values), tuple(refused)


def refusal_error(refused: tuple[RefusedSetting, ...]) -> SettingsError:
    """The whole-mapping error a strict reader (a terminal command) raises: every bad key."""
    problems = tuple(item.what() for item in refused)
    return SettingsError("invalid Counterfoil settings: " + "; ".join(problems), problems)


def unchosen_model(refused: tuple[RefusedSetting, ...]) -> RefusedSetting | None:
    """A refused setting that chooses the model and fell back to its default: a run would
    use a model the person did not choose (None: none)."""
    return next(
        (item for item in refused if item.key in MODEL_CHOICE and item.fallback == "default"),
        None,
    )

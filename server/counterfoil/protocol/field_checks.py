"""What each request's params field must hold, declared on the field itself, and the sentence
a client is told when it does not: one generic parser (`lsp.params`) reads these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import tools

MAX_TEXT_CHARS = 20_000  # a goal, a follow-up, a steering message
MAX_RUN_ID_CHARS = 128


@dataclass(frozen=True)
class FieldCheck:
    """`accepts` says whether a value will do; `what` is what it must be, in words, and
    `needs` how a missing or wrong value is named (`{what}` and `{name}` filled in)."""

    accepts: Callable[[Any], bool]
    what: str
    needs: str = "{what} {name}"
    max_chars: int | None = None  # a longer string is told its limit in its own sentence


def _filled(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _bounded(limit: int) -> Callable[[Any], bool]:
    return lambda value: _filled(value) and len(value) <= limit


def _identifier(limit: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and bool(value) and len(value) <= limit


def _argv(value: Any) -> bool:
    return isinstance(value, list) and tools.is_argv(
        value, max_items=tools.MAX_ARGV_ITEMS, max_item_chars=tools.MAX_ARGV_ITEM_CHARS
    )


def _digest(value: Any) -> bool:
    from ..receipts.content import DIGEST  # the log's rule, loaded when a digest is checked

    return isinstance(value, str) and DIGEST.fullmatch(value) is not None


TEXT = FieldCheck(_filled, "a non-empty string", max_chars=MAX_TEXT_CHARS)
WORD = FieldCheck(_bounded(tools.MAX_ARGV_ITEM_CHARS), "a non-empty string")
RUN_ID = FieldCheck(_identifier(MAX_RUN_ID_CHARS), "a non-empty string")
CALL_ID = FieldCheck(_identifier(tools.MAX_ARGV_ITEM_CHARS), "a non-empty string")
ARGV = FieldCheck(_argv, "a non-empty array of strings", needs="{name}: {what}")
SHA256 = FieldCheck(_digest, "64 lower-case hex characters", needs="{name}: {what}")


def checked(check: FieldCheck, *, sometimes: bool = False) -> dict[str, Any]:
    """A params field's metadata: its check and, for an optional field, SOMETIMES."""
    return {"check": check, "sometimes": True} if sometimes else {"check": check}

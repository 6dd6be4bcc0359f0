"""Compacting completed effects into receipt-backed records (the tiny-llm course's Day 5).

An older tool action and its observation may be replaced, in the model's view only, by a small
deterministic record of the receipt that holds the whole result: tool, arguments, exit state,
changed artifacts, a bounded preview, the receipt id, and a reviewed command's decision. Only an interaction whose tool,
arguments and complete observation match a receipt qualifies, and a compacted view is kept only
when the caller's own counter says it is smaller. The transcript and receipts are never changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..receipts import EffectReceipt
from .budget import OBSERVATION_PREFIX

Message = dict[str, str]
COMPACTED_PREFIX = "Completed tool interaction (compacted evidence):\n"


@dataclass(frozen=True)
class CompactionResult:
    """One model-visible transcript and the tokens reclaimed from it."""

    messages: tuple[Message, ...]
    compacted_interactions: int
    tokens_before: int
    tokens_after: int
    receipt_ids: tuple[str, ...]

    @property
    def saved_tokens(self) -> int:
        """The exact reduction the supplied counter reports."""
        return self.tokens_before - self.tokens_after


def compacted_record(
    receipt: EffectReceipt,
    result_preview_chars: int,
    rest: dict[str, Any] | None = None,
) -> str:
    """The record an interaction compacts to; `rest` (an artifact id and the range request
    that reads on) is added when the whole result can still be fetched."""
    result = receipt.result
    if len(result) > result_preview_chars:
        omitted = len(result) - result_preview_chars
        result = f"{result[:result_preview_chars]}… [{omitted} chars omitted]"
    payload: dict[str, Any] = {
        "arguments": receipt.arguments,
        "changed_artifacts": list(receipt.changed_artifacts),
        "exit_state": receipt.exit_state,
        "receipt_id": receipt.receipt_id,
        "result_preview": result,
        "tool": receipt.tool,
        **(rest or {}),
    }
    review = receipt.evidence.review
    if review is not None:
        # A reviewed command's changes were made in a copy: only the decision says whether
        # they reached the root.
        payload["review"] = {"decision": review.decision, "applied": len(review.applied or ())}
    return COMPACTED_PREFIX + json.dumps(payload, sort_keys=True, separators=(",", ":"))


def compact_completed_interactions(
    messages: list[Message],
    receipts: Sequence[EffectReceipt],
    count_tokens: Callable[[list[Message]], int],
    *,
    keep_recent: int = 1,
    result_preview_chars: int = 160,
) -> CompactionResult:
    """Compact old completed effects whose exact receipt is supplied.

    The newest `keep_recent` matching interactions stay verbatim; unreceipted observations
    (reads, listings) always do. Running it over its own output changes nothing, since a record
    is not a tool result.
    """
    if type(keep_recent) is not int or keep_recent < 0:
        raise ValueError("keep_recent must be a non-negative integer")
    if type(result_preview_chars) is not int or result_preview_chars <= 0:
        raise ValueError("result_preview_chars must be a positive integer")
    original = _copy_messages(messages)
    tokens_before = _count(count_tokens, original)
    unused = list(receipts)
    if not all(isinstance(receipt, EffectReceipt) for receipt in unused):
        raise ValueError("receipts must contain EffectReceipt values")
    matched: list[tuple[int, EffectReceipt]] = []
    for index in range(len(original) - 1):
        interaction = _completed_interaction(original[index], original[index + 1])
        if interaction is None:
            continue
        tool, arguments, result = interaction
        for position, receipt in enumerate(unused):
            if receipt.tool == tool and receipt.arguments == arguments and receipt.result == result:
                matched.append((index, unused.pop(position)))
                break
    selected = dict(matched[: max(0, len(matched) - keep_recent)])
    unchanged = CompactionResult(tuple(original), 0, tokens_before, tokens_before, ())
    if not selected:
        return unchanged
    compacted = [dict(message) for message in original]
    for index, receipt in selected.items():
        compacted[index + 1] = {
            "role": "user",
            "content": compacted_record(receipt, result_preview_chars),
        }
    tokens_after = _count(count_tokens, compacted)
    if tokens_after >= tokens_before:
        return unchanged
    receipt_ids = tuple(receipt.receipt_id for receipt in selected.values())
    return CompactionResult(
        tuple(compacted), len(receipt_ids), tokens_before, tokens_after, receipt_ids
    )


def _copy_messages(messages: list[Message]) -> list[Message]:
    copied: list[Message] = []
    for message in messages:
        if (
            not isinstance(message, dict)
            or not isinstance(message.get("role"), str)
            or not isinstance(message.get("content"), str)
        ):
            raise ValueError("messages must contain string role and content fields")
        copied.append({"role": message["role"], "content": message["content"]})
    return copied


def _count(count_tokens: Callable[[list[Message]], int], messages: list[Message]) -> int:
    count = count_tokens([dict(message) for message in messages])
    if type(count) is not int or count < 0:
        raise ValueError("count_tokens must return a non-negative integer")
    return count


def _completed_interaction(
    action_message: Message, result_message: Message
) -> tuple[str, dict[str, Any], str] | None:
    """The tool, arguments and observation of an action followed by its result, else None."""
    if action_message["role"] != "assistant" or result_message["role"] != "user":
        return None
    content = result_message["content"]
    if not content.startswith(OBSERVATION_PREFIX):
        return None
    try:
        action = json.loads(action_message["content"])
    except json.JSONDecodeError:
        return None
    if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
        return None
    arguments = {key: value for key, value in action.items() if key != "tool"}
    return action["tool"], arguments, content[len(OBSERVATION_PREFIX) :]

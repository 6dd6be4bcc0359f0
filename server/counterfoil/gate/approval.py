"""A person's answer to a proposal: yes or no, why not, and the text they chose instead.

A confirm callback may answer with a plain bool (the tiny-llm course's `confirm_tool`), an
`Approval`, or the course's `ApprovalDecision`. Only the boolean True or an approving answer
approves; anything else is a No. A reason
reaches the model, so it is cleaned and bounded here, once.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

DENIED = "operator denied the tool action"
MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class ApprovalDecision:
    """The course's structured answer: a denial carries the operator's reason to the model."""

    approved: bool
    reason: str = ""

    def __post_init__(self) -> None:
        if type(self.approved) is not bool:
            raise ValueError("approved must be a boolean")
        if not isinstance(self.reason, str):
            raise ValueError("approval reason must be a string")
        if not self.approved and not self.reason.strip():
            raise ValueError("a denial requires a nonblank operator reason")


@dataclass(frozen=True)
class Approval:
    """`text`: the whole file the person approved instead of the proposal (edits only); it
    comes from outside, so the core checks its type like any write."""

    approved: bool
    reason: str | None = None
    text: object = None
    # A No that asks for the same edit again on the file as it is now (it changed meanwhile).
    repropose: bool = False

    @classmethod
    def of(cls, answer: object) -> Approval:
        """Normalise a confirm callback's answer; only `True` or an approving Approval approve."""
        if isinstance(answer, Approval):
            if answer.approved is not True:
                return cls(False, clean_reason(answer.reason), repropose=answer.repropose is True)
            return cls(True, None, answer.text)
        if isinstance(answer, ApprovalDecision):
            return cls(True) if answer.approved is True else cls(False, clean_reason(answer.reason))
        return cls(answer is True)


_SPACES = re.compile(r"\s+")


def clean_reason(reason: object) -> str | None:
    """A person's reason as one line the model can read: no control characters, bounded."""
    if not isinstance(reason, str):
        return None
    printable = "".join(
        " " if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") else char for char in reason
    )
    line = _SPACES.sub(" ", printable).strip()
    if len(line) > MAX_REASON_CHARS:
        line = line[: MAX_REASON_CHARS - 1].rstrip() + "…"
    return line or None


def denial(reason: str | None) -> str:
    """The error the model reads for a No (without the `error: ` every refusal gets)."""
    return f"{DENIED}: {reason}" if reason else DENIED

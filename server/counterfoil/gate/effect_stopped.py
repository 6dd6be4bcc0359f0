"""A call that did not go on: refused, told No, failed, or its question taken back. An effect
whose outcome was already decided raises `EffectStopped`, so the outcome travels with the error
to the gate's step; `stopped_step` is that step's record, the gate's sentence its observation.
The course's methods raise the error itself."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import AgentError, ApprovalWithdrawn, DetailedRefusal, MissingPath
from ..receipts.errors import ReceiptNotRecorded
from ..step_facts import NoSuchPath, StepDetail
from ..steps import StepResult, error_text
from ..verdict import EffectOutcome, EffectState


class EffectStopped(Exception):
    """`error` ended the effect after its `outcome` was noted in the run's record."""

    def __init__(self, outcome: EffectOutcome, error: Exception) -> None:
        super().__init__(str(error))
        self.outcome = outcome
        self.error = error


def stopped_step(
    error: Exception, effect: EffectOutcome | None, nearby: Callable[[str], tuple[str, ...]]
) -> StepResult:
    """The record of a call `error` stopped, beside the outcome its effect was given first (if
    any); `nearby(path)`: the existing paths closest to a missing one."""
    detail: StepDetail | None = None
    withdrawn: str | None = None  # the call whose question was taken back unanswered
    if isinstance(error, ApprovalWithdrawn):  # not answered: neither refused nor decided
        sentence, withdrawn = str(error), error.call_id
    elif isinstance(error, MissingPath):
        sentence = str(error)
        detail = NoSuchPath(error.path, nearby(error.path))
    elif isinstance(error, DetailedRefusal):
        sentence, detail = str(error), error.detail
    elif isinstance(error, AgentError):
        sentence = str(error)
    elif isinstance(error, OSError):
        sentence = f"{error.strerror or error}"
    else:
        sentence = f"{type(error).__name__}: {error}"
    state: EffectState | None = "refused" if withdrawn is None else None
    return StepResult(
        error_text(sentence),
        call_id=withdrawn if effect is None else effect.call_id,
        state=state if effect is None else effect.state,
        effect=effect,
        error=sentence,
        detail=detail,
        unrecorded=sentence if isinstance(error, ReceiptNotRecorded) else None,
    )

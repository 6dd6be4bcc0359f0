"""What one tool call did, as the part that made it returns it: the observation the model is
shown and the facts beside it that the gate's step builds its `StepResult` from, so no part
leaves them on a shared record for the step to collect afterwards."""

from __future__ import annotations

from dataclasses import dataclass

from ..receipts import EffectReceipt
from ..step_facts import LinesShown, SameMeaning, SearchHits, SyntaxProblem
from ..verdict import EffectOutcome


@dataclass(frozen=True)
class CallRecord:
    """A read's or an effect's answer: `observation` (what the course's methods return),
    `effect` (what the effect became), `receipt` (the receipt it left, or the earlier one a
    repeated call id names), `syntax` (a file the effect left unparseable), `same` (a file it
    changed only in layout), `lines` (what a
    ranged read showed) and `search` (how many lines a search found)."""

    observation: str
    effect: EffectOutcome | None = None
    receipt: EffectReceipt | None = None
    syntax: SyntaxProblem | None = None
    same: SameMeaning | None = None
    lines: LinesShown | None = None
    search: SearchHits | None = None

"""What one step did: the tiny-llm course's observation string, and beside it a record of the
step that the terminal, the daemon and the editor render, so no layer reads an outcome out of
the text the model is shown."""

from __future__ import annotations

from dataclasses import dataclass

from .verdict import EffectOutcome, EffectState


@dataclass(frozen=True)
class StepResult:
    """One tool call's observation and what became of it.

    `state` is the effect's fate in the verdict's words (`approved`, `rejected`, `refused`,
    `failed`); a read the gate refused is `refused`, a read that ran has none. `effect` is what
    a file effect wrote (path, digest) or a command ran (argv, exit status, timed out) and why
    it was not done; `receipt_id` names its receipt and `output_sha256` / `result_sha256` the
    bytes the receipt keeps (a command's whole output, the file written).
    """

    observation: str
    call_id: str | None = None
    state: EffectState | None = None
    effect: EffectOutcome | None = None
    receipt_id: str | None = None
    output_sha256: str | None = None
    result_sha256: str | None = None

    @property
    def reason(self) -> str | None:
        """Why an effect was not done (the person's reject reason, a refusal, a failure)."""
        if self.effect is None or self.effect.state == "approved":
            return None
        return self.effect.reason

    def summary(self) -> str | None:
        """One line for a terminal or a log: the call, its state, how a command ended, and its
        receipt; None for a step that made no call."""
        if self.call_id is None or self.state is None:
            return None
        parts = [f"{self.call_id} {self.state}"]
        effect = self.effect
        if effect is not None and effect.timed_out:
            parts.append("timed out")
        elif effect is not None and effect.exit_status is not None:
            parts.append(f"exit status {effect.exit_status}")
        if effect is not None and effect.review is not None:
            parts.append(f"review {effect.review}")
        if self.receipt_id is not None:
            parts.append(f"receipt {self.receipt_id}")
        return ", ".join(parts)

"""What one step did: the tiny-llm course's observation string, and beside it a record of the
step that the terminal, the daemon and the editor render, so no layer reads an outcome out of
the text the model is shown."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

from .step_facts import (
    ActionLoop,
    LinesShown,
    PhraseNotFound,
    ReadNow,
    SameMeaning,
    SearchHits,
    StepDetail,
    SyntaxProblem,
    TaskProgress,
    TreeOverview,
)
from .verdict import EffectOutcome, EffectState


@dataclass(frozen=True)
class StepResult:
    """One tool call's observation and what became of it.

    `state` is the effect's fate in the verdict's words (`approved`, `rejected`, `refused`,
    `failed`); a read the gate refused is `refused`, a read that ran has none. `effect` is what
    a file effect wrote (path, digest) or a command ran (argv, exit status, timed out) and why
    it was not done; `receipt_id` names its receipt and `output_sha256` / `result_sha256` the
    bytes the receipt keeps (a command's whole output, the file written). `error` is the gate's
    one sentence when it refused the call, was told No, or the effect failed: the observation
    is then `error: ` and that sentence, and no layer needs to read it back out of the text.
    `detail` is a fact that tells the model more than the course's sentence (`step_facts`: the
    file to read, the paths near a missing one, where an edit's old text nearly is); the
    model is shown the text built from it (`model_text`). `loop`: the model repeated itself with nothing new to see (an
    alternation is refused with it; an identical repeat is done and told so after its
    observation). `syntax`: the file a write or an edit left unparseable in its format, told
    after the observation. `same`: a file a write or an edit changed only in layout (the same
    JSON value, Python code or TOML values), told after the observation. `tree` is what the root holds after a step that changed which files it
    holds, shown to the model after the observation. `read_now`: the file a read just showed
    had a change refused for not being read, to be made now. `progress`: after a file written,
    the task and the effects done so far. `phrase`: a search for several words found nothing.
    `lines`: what a ranged read showed. `search`: how many lines a search found (whether it
    found nothing is read from this, never from its text). `unrecorded`: the effect ran but
    its receipt could not be written (the gate's sentence); the run ends on it.
    """

    observation: str
    call_id: str | None = None
    state: EffectState | None = None
    effect: EffectOutcome | None = None
    receipt_id: str | None = None
    output_sha256: str | None = None
    result_sha256: str | None = None
    error: str | None = None
    detail: StepDetail | None = None
    loop: ActionLoop | None = None
    syntax: SyntaxProblem | None = None
    same: SameMeaning | None = None
    tree: TreeOverview | None = None
    read_now: ReadNow | None = None
    progress: TaskProgress | None = None
    phrase: PhraseNotFound | None = None
    lines: LinesShown | None = None
    search: SearchHits | None = None
    unrecorded: str | None = None

    def model_text(self) -> str:
        """What the model is told: the observation, or, for a refusal with a `detail`, the
        sentence built from it (the course's words stay the observation and `execute`'s)."""
        if self.error is not None and self.detail is not None:
            return error_text(self.detail.sentence())
        return self.observation

    @property
    def is_error(self) -> bool:
        """The call was refused, told No, or failed: nothing was read and no effect is kept
        (what elision, externalizing, the evals and the branches decide by)."""
        return self.error is not None

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


def error_text(sentence: str) -> str:
    """The one form of an observation that reports a refusal or a failure: `error: ` and the
    sentence (the course's words; `plain_step` reads it back only at the course's edge)."""
    return f"error: {sentence}"


def refusal(sentence: str, *, loop: ActionLoop | None = None) -> StepResult:
    """A call refused before it became an effect, with the gate's sentence on the record
    (`error`, so `is_error` holds) and in the observation."""
    return StepResult(error_text(sentence), state="refused", error=sentence, loop=loop)


def plain_step(observation: str) -> StepResult:
    """The course's plain-string surface at the edge: its workspace answers with a string and
    says a call failed by starting it with `error: `. The one place an observation's text is
    read for an outcome; everything past it reads the record."""
    if observation.startswith("error:"):
        return StepResult(
            observation, state="refused", error=observation.removeprefix("error:").lstrip()
        )
    return StepResult(observation)


class StepGate(ABC):
    """A gate that answers each call with its record (`execute_step`); `execute` is the
    course's surface over it, the observation alone. The workspace and its variants (the
    course's bounded-evidence wrapper) implement this one interface."""

    @abstractmethod
    def execute_step(self, action: Any, tool_call_id: str | None = None) -> StepResult:
        """Run one model action; every refusal is a record with an `error: …` observation."""

    def execute(self, action: Any, tool_call_id: str | None = None) -> str:
        """Run one model action; every refusal comes back as an `error: …` observation."""
        return self.execute_step(action, tool_call_id).observation


class PlainGate(Protocol):
    """The course's workspace: an action in (one positional argument), a string out."""

    def execute(self, action: Any) -> str: ...


TakeStep = Callable[[Any], StepResult]


def step_taker(workspace: object) -> TakeStep:
    """How the loop takes a step through `workspace`: a `StepGate`'s own record, or, for the
    course's plain kind (or a gate whose `execute` was redefined or replaced, which is then
    taken at its word), the string `execute(action)` returns, through `plain_step`."""
    if isinstance(workspace, StepGate) and steps_itself(workspace):
        return workspace.execute_step
    plain = cast(PlainGate, workspace)
    return lambda action: plain_step(plain.execute(action))


def steps_itself(gate: StepGate) -> bool:
    """Whether `gate.execute` is still the adapter over its record."""
    replaced = "execute" in getattr(gate, "__dict__", {})
    return type(gate).execute is StepGate.execute and not replaced

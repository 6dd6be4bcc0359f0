"""Fork one checkpoint into steered branches and choose one by its evaluation (the tiny-llm
course's Day 8).

A branch is a steered resume (Day 6) in its own workspace and receipt log, judged by a Day 7
case. The model reports what it reused of the saved prefix, so a branch that silently
re-prefilled the whole prompt shows. Copying the workspace and applying the chosen branch's
changes are `copies.py`'s and `selection.py`'s work; here nothing is copied or merged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..errors import AgentError
from ..evaluation import EvaluationCase, EvaluationReport, evaluate_run
from ..gate.workspace import Workspace
from ..loop import AgentLimits, AgentRun
from ..model_state import PrefixReuse
from ..receipts import ReceiptStore
from ..sessions import AgentCheckpoint, resume_with_steering


@runtime_checkable
class ReportsPrefixReuse(Protocol):
    """A branch's generator: after its run it says how much of the shared prefix it reused."""

    @property
    def reuse(self) -> PrefixReuse | None: ...


@dataclass(frozen=True)
class BranchOutcome:
    """One steered branch: its run, its evaluation, and what it reused of the prefix."""

    name: str
    steering: str
    run: AgentRun
    report: EvaluationReport
    reuse: PrefixReuse


def run_branch(
    name: str,
    steering: str,
    checkpoint: AgentCheckpoint,
    generate: Callable[[list[dict[str, str]]], str],
    workspace: Workspace,
    receipts: ReceiptStore,
    case: EvaluationCase,
    limits: AgentLimits | None = None,
) -> BranchOutcome:
    """Resume `checkpoint` with `steering` in this branch's own workspace, then evaluate it.

    `generate` must say what it reused (`generate.reuse`, a PrefixReuse) once it has run."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("branch name must not be blank")
    run = resume_with_steering(checkpoint, steering, generate, workspace, limits)
    report = evaluate_run(run, workspace, receipts, case)
    reuse = generate.reuse if isinstance(generate, ReportsPrefixReuse) else None
    if not isinstance(reuse, PrefixReuse):
        raise AgentError("branch generator did not report prefix reuse")
    return BranchOutcome(name, steering, run, report, reuse)


def select_branch(outcomes: Sequence[BranchOutcome], selected_name: str) -> BranchOutcome:
    """The one outcome named `selected_name`, which must have passed its evaluation: the choice
    is the person's, never a hidden score."""
    if not isinstance(selected_name, str) or not selected_name.strip():
        raise ValueError("selected branch name must not be blank")
    matches = [outcome for outcome in outcomes if outcome.name == selected_name]
    if len(matches) != 1:
        raise AgentError("selected branch name must match exactly one outcome")
    if not matches[0].report.passed:
        raise AgentError("selected branch must pass evaluation")
    return matches[0]

"""What plugs into the agent loop: a part reads the run's record and adds to it at three points.

The loop itself only asks the model, parses one action, passes it through the gate and keeps
the conversation. What a receipt-keeping run adds on top (the files the task names, read before
the model's first step; the final answer held while the record shows a part not done; the
progress note after each change) is a `LoopPart`, so each lives in its own module
(`opening_reads.py`, `final_check.py`) and the loop calls them all the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .actions import ToolAction
from .gate.workspace import Workspace
from .step_facts import FinalTooSoon, TreeOverview
from .steps import StepResult
from .verdict import EffectOutcome
from .workspace_view import CHANGES


@dataclass
class TurnRecord:
    """What the run has done so far, as its parts read it: the task, the workspace, how a
    step is taken through the gate, the overview the model was last shown (None: a workspace
    that shows none, the course's kind), the tool steps in order, and the effects done as
    `TaskProgress` lists them (a resumed run's earlier ones first). `workspace` may be the
    course's plain kind, which keeps no record: it has no outcomes and no allowed commands."""

    task: str
    workspace: Workspace
    take_step: Callable[[ToolAction], StepResult]
    tree: TreeOverview | None
    history: list[tuple[ToolAction, StepResult]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)

    @property
    def gate(self) -> Workspace | None:
        """The receipt-keeping workspace, or None for the course's plain kind."""
        return self.workspace if isinstance(self.workspace, Workspace) else None

    def outcomes(self) -> tuple[EffectOutcome, ...]:
        """Every effect's outcome in the workspace's record, a resumed run's earlier ones too."""
        return () if self.gate is None else self.gate.effect_outcomes

    def checks(self) -> tuple[tuple[str, ...], ...]:
        """The commands the model may run to check its changes (none when it may run none)."""
        gate = self.gate
        if gate is None or "run_command" not in gate.available_tools:
            return ()
        return gate.policy.allowed_commands

    def may_change_files(self) -> bool:
        return any(tool in self.workspace.available_tools for tool in CHANGES)


@dataclass(frozen=True)
class OpeningRead:
    """A file read for the model before its first step, through the gate like any read."""

    path: str
    action: ToolAction
    read: StepResult


@dataclass(frozen=True)
class FinalCall:
    """What a part says of a final answer: `held`, what the record shows against it (the
    model is told and the run goes on), or `unchecked`, why it is taken without the check
    (the run says so). Neither: taken as the run's end."""

    held: FinalTooSoon | None = None
    unchecked: str | None = None


class LoopPart:
    """One addition to the loop; each hook does nothing unless a part redefines it."""

    def opening(self, run: TurnRecord) -> Sequence[OpeningRead]:
        """Reads made for the model before its first step of a new conversation."""
        return ()

    def final(self, run: TurnRecord) -> FinalCall:
        """The part's call on the final answer the model just gave."""
        return FinalCall()

    def after_step(self, run: TurnRecord, action: ToolAction, taken: StepResult) -> StepResult:
        """The step's record with what the part adds for the model (`taken` when nothing)."""
        return taken

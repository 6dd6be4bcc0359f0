"""The branch requests' messages (`counterfoil/branches`, `counterfoil/selectBranch`), kept
beside `messages` (which imports and lists them) so a change to branches touches this file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .field_checks import WORD, checked
from .wire import SOMETIMES

BranchState = Literal["running", "interrupted", "ended", "selected", "discarded"]
SelectionOutcome = Literal["selected", "refused", "stopped"]


@dataclass(frozen=True, kw_only=True)
class BranchesParams:
    runId: str = field(metadata=checked(WORD))


@dataclass(frozen=True, kw_only=True)
class BranchCheckResult:
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True, kw_only=True)
class BranchInfo:
    """One branch of a forked run, as `counterfoil branches` lists it."""

    name: str  # RUN_ID.N
    steering: str
    state: BranchState
    reason: str | None
    steps: int
    validation: str
    effects: dict[str, int]
    filesChanged: list[str]
    copyRoot: str | None  # the branch's copy of the root (null once it was removed)
    prefixTokens: int | None
    prefillAvoided: int | None  # null: the model reports no prompt counters
    prefillNote: str | None
    checksPassed: bool | None  # null: no task package's checks were given
    checks: list[BranchCheckResult]
    final: str | None
    # For a branch that can be kept: what Keep does (the changes it applies, or that there are
    # none; the run it ends; the branches it discards), and whether the editor asks first.
    keepWould: str | None = field(default=None, metadata=SOMETIMES)
    keepAsks: bool | None = field(default=None, metadata=SOMETIMES)


@dataclass(frozen=True, kw_only=True)
class BranchesResult:
    runId: str
    branches: list[BranchInfo]
    error: str | None  # the sentence when the run cannot be listed (no such run)


@dataclass(frozen=True, kw_only=True)
class SelectBranchParams:
    branch: str = field(metadata=checked(WORD))


@dataclass(frozen=True, kw_only=True)
class SelectBranchResult:
    """`refused`: bad input, nothing changed; `stopped`: a changed base refused it all, or a
    change was denied (what was applied before stays, receipted)."""

    branch: str
    outcome: SelectionOutcome
    detail: str | None
    applied: list[str]  # one observation per change written
    discarded: list[str]

"""The verdict of a run, computed from what its effects did, never from what the model said.

The Workspace notes one `EffectOutcome` per effect call as it happens; `compute_verdict`
turns that list into who approved what, which files changed (and to which bytes), and
whether the last change was validated by an allowlisted command that ran after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

EffectState = Literal["approved", "rejected", "refused", "failed"]
Validation = Literal["passed", "failed", "not_run", "stale"]

EFFECT_STATES: tuple[EffectState, ...] = ("approved", "rejected", "refused", "failed")
NOTHING_TO_APPLY = "nothing to apply"
REVIEW_REJECTED = "rejected"


@dataclass(frozen=True)
class EffectOutcome:
    """What became of one effect call.

    `approved`: asked, approved and done. `rejected`: the person said No. `refused`: the gate
    refused it before asking (not allowed, not enabled, a refused path, …). `failed`: approved
    but not done, or done without its receipt (`reason` says which). `sha256` is the digest of
    the bytes a file effect wrote (None when nothing was written); `exit_status` is a command's
    status (None when it did not run or timed out; then `timed_out` says which), and
    `tree_changes` the files it changed, each with the digest it left (None: deleted).
    `review` is a reviewed command's decision (`accepted`, `partially accepted`, `rejected`,
    `nothing to apply`, `not applied`): its `tree_changes` are then only what was applied.
    `by_rule`: the text of the person's approval rule that approved it without asking (None:
    the person was asked, or it was not approved). `mcp_tool`: an MCP call's `server/tool`,
    what the progress note and the verdict name it by.
    """

    call_id: str
    tool: str
    state: EffectState
    path: str | None = None
    argv: tuple[str, ...] | None = None
    sha256: str | None = None
    exit_status: int | None = None
    timed_out: bool = False
    reason: str | None = None
    tree_changes: tuple[tuple[str, str | None], ...] = ()
    review: str | None = None
    by_rule: str | None = None
    mcp_tool: str | None = None

    @property
    def wrote_file(self) -> bool:
        return self.path is not None and self.sha256 is not None

    @property
    def changed_files(self) -> bool:
        return self.wrote_file or bool(self.tree_changes)

    @property
    def ran_command(self) -> bool:
        """A command that ran to an exit status or a timeout, and was recorded."""
        return (
            self.state == "approved"
            and self.argv is not None
            and (self.exit_status is not None or self.timed_out)
        )

    @property
    def ran_on_the_root(self) -> bool:
        """The bytes the command ran on are the root's: it ran in the root, or in a reviewed
        copy whose changes all reached the root (accepted, or nothing to apply). A copy whose
        changes were left out (rejected, partly applied, not applied) ended on other bytes."""
        return self.review in (None, "accepted", NOTHING_TO_APPLY)

    @property
    def review_rejected(self) -> bool:
        """A reviewed command whose changes the person rejected: nothing it did reached the
        root."""
        return self.review == REVIEW_REJECTED


@dataclass(frozen=True)
class FileChange:
    """A file the run changed, the digest it was left with (None: deleted) and the call."""

    path: str
    sha256: str | None
    call_id: str


@dataclass(frozen=True)
class RunVerdict:
    """Effects by state (call ids, in order), files changed, and the validation status.

    `validation` is decided by the last allowlisted command that ran on the root's bytes after
    the last file change: `passed` (exit 0) or `failed` (non-zero or timed out). A command that
    ran only before a later change leaves it `stale`; no command at all leaves it `not_run`
    (also when nothing changed). A command that changed files is itself a change, so it does not
    validate what it wrote: a formatter after the last passing test leaves it `stale` (so does a
    partly applied review). A reviewed command whose changes did not reach the root ran on other
    bytes, so its exit status validates nothing, and what it left out changed nothing: a
    rejected review neither validates nor makes validation stale. `validated_by` is the call id of the deciding (or
    stale) command. `compute_verdict` is the one place this rule lives: the run's verdict, the
    exported evidence and its verifier all call it.
    """

    effects: tuple[EffectOutcome, ...] = ()
    files_changed: tuple[FileChange, ...] = ()
    validation: Validation = "not_run"
    validated_by: str | None = None

    def calls(self, state: EffectState) -> tuple[str, ...]:
        return tuple(outcome.call_id for outcome in self.effects if outcome.state == state)

    @property
    def approved(self) -> tuple[str, ...]:
        return self.calls("approved")

    @property
    def rejected(self) -> tuple[str, ...]:
        return self.calls("rejected")

    @property
    def refused(self) -> tuple[str, ...]:
        return self.calls("refused")

    @property
    def failed(self) -> tuple[str, ...]:
        return self.calls("failed")

    @property
    def approved_by_rule(self) -> tuple[str, ...]:
        """Approved effects a rule of the person's approved without asking them: counted apart,
        as no person read them."""
        return tuple(
            outcome.call_id
            for outcome in self.effects
            if outcome.state == "approved" and outcome.by_rule is not None
        )

    @property
    def review_rejected(self) -> tuple[str, ...]:
        """Approved commands whose reviewed changes the person then rejected."""
        return tuple(outcome.call_id for outcome in self.effects if outcome.review_rejected)

    @property
    def succeeded(self) -> bool:
        """The effects back a completed run: nothing rejected (a review's changes included) or
        failed, validation did not fail, and either the last change was followed by a passing
        command or nothing changed.
        """
        if self.rejected or self.review_rejected or self.failed or self.validation == "failed":
            return False
        return self.validation == "passed" or not self.files_changed

    def counts(self) -> str:
        """The effects counted by state, then the rejected reviews when there are any."""
        counts = [f"{len(self.calls(state))} {state}" for state in EFFECT_STATES]
        if self.approved_by_rule:
            counts[0] += f" ({len(self.approved_by_rule)} by rule)"
        if self.review_rejected:
            counts.append(f"{len(self.review_rejected)} review rejected")
        return ", ".join(counts)

    def summary(self) -> str:
        """One line for a log or a status message: validation, effects, files changed."""
        changed = ", ".join(change.path for change in self.files_changed) or "nothing"
        return f"validation {self.validation}; {self.counts()}; changed {changed}"

    def outcome(self, call_id: str | None) -> EffectOutcome | None:
        for outcome in reversed(self.effects):
            if outcome.call_id == call_id:
                return outcome
        return None


def compute_verdict(outcomes: Iterable[EffectOutcome]) -> RunVerdict:
    effects = tuple(outcomes)
    last_change = max(
        (index for index, outcome in enumerate(effects) if outcome.changed_files), default=-1
    )
    changes: dict[str, FileChange] = {}
    for outcome in effects:
        written: list[tuple[str, str | None]] = list(outcome.tree_changes)
        if outcome.wrote_file:
            assert outcome.path is not None
            written.append((outcome.path, outcome.sha256))
        for path, digest in written:
            changes.pop(path, None)
            changes[path] = FileChange(path, digest, outcome.call_id)
    commands = [
        (index, outcome)
        for index, outcome in enumerate(effects)
        if outcome.ran_command and (outcome.ran_on_the_root or outcome.changed_files)
    ]
    validation: Validation = "not_run"
    validated_by: str | None = None
    if commands:
        index, last = commands[-1]
        validated_by = last.call_id
        if index <= last_change:  # after it, or by it: a command's own change is unchecked
            validation = "stale"
        else:
            validation = "passed" if last.exit_status == 0 else "failed"
    return RunVerdict(effects, tuple(changes.values()), validation, validated_by)

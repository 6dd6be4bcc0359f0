"""Selecting one branch of a forked run: its file changes applied to the real root as ordinary
effects, each shown and approved like any other, with receipts that name the branch; then the
other branches discarded (their copies removed; their records and receipt logs kept).

Every refusal is one sentence and changes nothing: a name that is not a branch, a branch of
another folder's run, a run whose branches were already settled, a branch that never finished
or failed its checks, and a base changed since the fork.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError
from ..gate.policy import ToolPolicy
from ..proposals import ToolProposal
from ..receipt_evidence import utc_now
from ..receipt_fields import ApprovalRecord
from ..receipts import ReceiptStore
from ..sessions.intents import intent_of
from ..sessions.record import CheckpointRefused
from ..sessions.store import RunLock, SessionStore
from .copies import BranchCopy, apply_branch, pending_changes
from .forks import refuse_settled
from .kept_branch import end_for_kept_branch
from .records import BranchRecord, BranchStore, parse_branch_name


class SelectionStopped(AgentError):
    """The selection began or was refused at the disk (a changed base, a denied change)."""


@dataclass(frozen=True)
class Selection:
    branch: BranchRecord
    results: tuple[str, ...]  # one observation per change applied
    discarded: tuple[str, ...]  # the other branches' names


def open_branch(sessions: SessionStore, root: Path, name: str) -> tuple[BranchRecord, RunLock]:
    """The branch `name` (`RUN_ID.N`), checked and its run locked; raises CheckpointRefused."""
    run_id, number = parse_branch_name(name)
    lock = sessions.lock_existing(run_id, root)
    try:
        record = BranchStore(sessions).load(run_id, number)
        if record.root != str(root) or record.log != str(sessions.log_path):
            raise CheckpointRefused(
                f"branch {name} was forked from a run of another folder ({record.root})"
            )
        refuse_settled(sessions, run_id)
        if record.state != "ended":
            raise CheckpointRefused(
                f"branch {name} did not run to its end ({record.state}); select another"
            )
        if record.checks_passed is False:
            failed = [check.name for check in record.checks if not check.passed]
            failed += [f"changed {path}" for path in record.forbidden]
            raise CheckpointRefused(f"branch {name} failed its checks: {', '.join(failed)}")
    except BaseException:
        lock.release()
        raise
    return record, lock


def branch_copy(branches: BranchStore, record: BranchRecord) -> BranchCopy:
    return BranchCopy(
        record.name, branches.copy_root(record), branches.copy_log(record), dict(record.base)
    )


def select_named_branch(
    sessions: SessionStore,
    root: Path,
    name: str,
    policy: ToolPolicy,
    store: ReceiptStore,
    confirm: Callable[[ToolProposal], object],
    *,
    before_changes: Callable[[BranchRecord, int], None] = lambda _record, _count: None,
    via: str = "cli",
) -> Selection:
    """Apply branch `name` to `policy.root` through `confirm` (approvals recorded as `via`,
    selecting the branch), then discard its siblings.

    Raises CheckpointRefused (bad input: nothing changed) or SelectionStopped (a changed
    base refuses it all; a denied or failed change stops there, the earlier ones applied and
    receipted, the siblings kept so that another can still be chosen)."""
    record, lock = open_branch(sessions, root, name)
    branches = BranchStore(sessions)
    try:
        copy = branch_copy(branches, record)
        if not copy.root.is_dir():
            raise CheckpointRefused(f"the copy of branch {name} is missing")
        before_changes(record, len(pending_changes(copy, policy.root)))

        def write_intent(proposal: ToolProposal, approval: ApprovalRecord) -> None:
            intent = intent_of(proposal, approval, record.run_id, policy.root)
            sessions.write_intent(record.run_id, proposal.tool_call_id, intent)

        try:
            results = apply_branch(
                copy,
                policy,
                store,
                confirm,
                via=via,
                run_id=record.run_id,  # the run it forks: its lock is held, its intents kept
                before_effect=write_intent,
            )
        except AgentError as error:
            raise SelectionStopped(str(error)) from None
        now = utc_now()
        discarded = []
        for other in branches.branches(record.run_id):
            if other.number == record.number or other.state == "discarded":
                continue
            shutil.rmtree(branches.copy_root(other), ignore_errors=True)
            reason = f"{name} was selected"
            branches.write(other.updated_with(state="discarded", reason=reason, updated=now))
            discarded.append(other.name)
        # Selected last: a stop before this leaves the siblings discarded and this one to be
        # selected again (nothing left to apply), never siblings "ended" for ever.
        branches.write(record.updated_with(state="selected", updated=now))
        end_for_kept_branch(sessions, record.run_id, name, now)  # no longer offered to resume
        shutil.rmtree(copy.root, ignore_errors=True)  # applied: its changes live in the root
    finally:
        lock.release()
    return Selection(record, results, tuple(discarded))

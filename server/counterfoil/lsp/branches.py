"""`counterfoil/branches` and `counterfoil/selectBranch`: a forked run's branches, as the
terminal's `counterfoil branches` lists them, and one selected, each change asked through
`counterfoil/confirm` like any effect (receipts approved `editor, selecting branch …`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..gate.workspace import Workspace
from ..receipts import ReceiptStore
from ..sessions.branches import BranchRecord, BranchStore, listed_state
from ..sessions.record import CheckpointRefused
from ..sessions.store import SessionStore
from .branch_messages import (
    BranchCheckResult,
    BranchesResult,
    BranchInfo,
    SelectBranchResult,
)


def branches_answer(log: Path | None, run_id: str) -> BranchesResult:
    if log is None:
        return BranchesResult(runId=run_id, branches=[], error="no workspace folder is open")
    sessions = SessionStore(log)
    try:
        if not sessions.has_run(run_id):
            raise CheckpointRefused(f"there is no run {run_id}")
    except CheckpointRefused as error:
        return BranchesResult(runId=run_id, branches=[], error=str(error))
    live = sessions.is_live(run_id)
    store = BranchStore(sessions)
    found = [
        branch_info(item, listed_state(item, live), store.copy_root(item))
        for item in store.branches(run_id)
    ]
    return BranchesResult(runId=run_id, branches=found, error=None)


def branch_info(record: BranchRecord, state: Any, copy_root: Path) -> BranchInfo:
    return BranchInfo(
        name=record.name,
        steering=record.steering,
        state=state,
        reason=record.reason,
        steps=record.steps,
        validation=record.validation,
        effects=dict(record.effects),
        filesChanged=list(record.files_changed),
        copyRoot=str(copy_root) if copy_root.is_dir() else None,
        prefixTokens=record.prefix_tokens,
        prefillAvoided=record.prefill_avoided,
        prefillNote=record.prefill_note,
        checksPassed=record.checks_passed,
        checks=[
            BranchCheckResult(name=c.name, passed=c.passed, detail=c.detail) for c in record.checks
        ],
        final=record.final,
    )


def select_answer(
    name: str, open_workspace: Callable[[], tuple[Workspace, Callable[[], None]]], confirm: Any
) -> SelectBranchResult:
    """Select branch `name` in the daemon's root: its receipts go to the client as they are
    recorded; the selection writes without `allowWrites`, as a revert does (the person asked)."""
    from ..branches.selection import SelectionStopped, select_named_branch
    from .jobs import WorkspaceUnavailable

    def answer(
        outcome: Any,
        detail: str | None,
        applied: tuple[str, ...] = (),
        discarded: tuple[str, ...] = (),
    ) -> SelectBranchResult:
        return SelectBranchResult(
            branch=name,
            outcome=outcome,
            detail=detail,
            applied=list(applied),
            discarded=list(discarded),
        )

    try:
        workspace, unsubscribe = open_workspace()
    except WorkspaceUnavailable as error:
        return answer("refused", error.message)
    store: ReceiptStore = workspace.receipt_store
    assert store.path is not None  # the daemon's workspace always has its log
    policy = replace(workspace.policy, allow_writes=True)
    try:
        selection = select_named_branch(
            SessionStore(store.path), policy.root, name, policy, store, confirm, via="editor"
        )
    except CheckpointRefused as error:
        return answer("refused", str(error))
    except SelectionStopped as error:
        return answer("stopped", str(error))
    finally:
        unsubscribe()
    return answer("selected", None, selection.results, selection.discarded)

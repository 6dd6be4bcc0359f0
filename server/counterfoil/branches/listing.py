"""A forked run's branches as the protocol lists them (`counterfoil/branches`): the daemon
answers with it and `counterfoil branches --json` prints it, one document written once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ..protocol.branches import BranchCheckResult, BranchesResult, BranchInfo
from ..sessions.record import CheckpointRefused
from ..sessions.store import SessionStore
from .keep_plan import keep_plan
from .records import BranchRecord, BranchStore, listed_state


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
    family = store.branches(run_id)
    found = []
    for item in family:
        state = listed_state(item, live)
        info = branch_info(item, state, store.copy_root(item))
        if state == "ended":  # it waits for a choice: say what keeping it does
            plan = keep_plan(sessions, store, item, family)
            info = replace(info, keepWould=plan.words, keepAsks=plan.asks)
        found.append(info)
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

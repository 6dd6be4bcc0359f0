"""Forking a paused or finished run at its checkpoint into steered branches, each in its own
copy of the root with its own receipt log, recorded so that a later process can list them and
apply one (`selection.py`).

A branch continues the checkpoint's conversation (its system prompt rebuilt as a resume does,
the files changed since the model read them named, then its steering) in a workspace over its
copy. One model runs the branches one after another: a model with a KV cache keeps the shared
prefix (mlx-lm's cache is trimmed back to it; a server's prefix cache serves it), and the
prompt tokens the first response of each branch did not prefill are its prefill avoided, as
the model's own counters say; a model without counters (a script) leaves it unknown.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Never

from ..errors import AgentError
from ..loop import AgentEvent, AgentLimits, AgentRun
from ..model import Model, ResponseStats
from ..receipt_evidence import utc_now
from ..receipts import ReceiptStore
from ..run_start import LoadedModel, RunPlan, RunSession, open_run
from ..sessions.checkpoint import RestoresCheckpoints, restore_model_state
from ..sessions.record import CheckpointRefused
from ..sessions.reopen import ResumePlan, check_origin, read_files_kept
from ..sessions.steering import completed_tool_boundary, steering_message
from ..sessions.store import SessionStore
from ..verdict import EFFECT_STATES
from .copies import BranchCopy, changed_paths, fork_root
from .records import BranchCheck, BranchRecord, BranchStore

if TYPE_CHECKING:
    from ..evals.package import TaskPackage
    from ..gate.policy import ToolPolicy
    from ..gate.workspace_setup import ApprovalChannel, ConfirmProposal

NO_COUNTERS = "the model reports no prompt counters (a scripted model prefills nothing)"


def open_for_fork(sessions: SessionStore, root: Path, run_id: str) -> ResumePlan:
    """The run to fork, locked for this process and checked; raises CheckpointRefused.

    A paused, interrupted or ended run can be forked, at the last complete observation its
    checkpoint holds (an approval left open is not asked in the branches)."""
    lock = sessions.lock_existing(run_id, root)
    try:
        record = sessions.load(run_id)
        check_origin(record, sessions, root)
        try:
            completed_tool_boundary(record.checkpoint)
        except AgentError:
            raise CheckpointRefused(
                f"run {run_id} has no checkpoint to fork from: it stopped before its first "
                "complete observation"
            ) from None
        refuse_settled(sessions, run_id)
        kept, changed = read_files_kept(record, root)
    except BaseException:
        lock.release()
        raise
    return ResumePlan(record, lock, kept, changed)


def refuse_settled(sessions: SessionStore, run_id: str) -> None:
    """CheckpointRefused once a branch of the run was selected: its branches are settled."""
    branches = BranchStore(sessions).branches(run_id)
    settled = next((item for item in branches if item.state == "selected"), None)
    if settled is not None:
        raise CheckpointRefused(
            f"the branches of run {run_id} were settled: {settled.name} was selected"
        )


def start_branch(plan: ResumePlan, branches: BranchStore, steering: str) -> BranchCopy:
    """The next branch's copy of the root and log, and its first record (state running)."""
    record = plan.record
    number = branches.next_number(record.run_id)
    root, log = Path(record.root), Path(record.log)
    try:
        copy = fork_root(str(number), root, log, branches.folder(record.run_id))
    except BaseException:
        shutil.rmtree(branches.branch_folder(record.run_id, number), ignore_errors=True)
        raise
    now = utc_now()
    branches.write(
        BranchRecord(
            run_id=record.run_id,
            number=number,
            steering=steering,
            checkpoint_id=record.checkpoint.checkpoint_id,
            root=record.root,
            log=record.log,
            base=copy.base,
            created=now,
            updated=now,
            cloned_files=copy.copied.cloned,
            copied_files=copy.copied.copied,
        )
    )
    return copy


def branch_record(branches: BranchStore, plan: ResumePlan, copy: BranchCopy) -> BranchRecord:
    return branches.load(plan.record.run_id, int(copy.name))


@dataclass(frozen=True)
class BranchRun:
    """How one branch runs: its gate (the `policy` over the branch's copy, `confirm` each
    proposal, `via_of` one named in its receipt), the model (shared by all), its limits and
    what the terminal shows. `read_agents`: the copy's AGENTS.md is read into the prompt."""

    model: Callable[[list[dict[str, str]]], str]
    policy: ToolPolicy
    confirm: ConfirmProposal
    via_of: ApprovalChannel | None = None
    limits: AgentLimits | None = None
    on_event: Callable[[AgentEvent], Any] | None = None
    should_stop: Callable[[], bool] = lambda: False
    read_agents: bool = True
    prompt_cache: Callable[[], None] | None = None  # read the checkpoint's KV cache, if kept
    shown: Callable[[list[dict[str, str]]], str] | None = None  # the model as the terminal shows it


def run_in_branch(
    plan: ResumePlan,
    branches: BranchStore,
    copy: BranchCopy,
    how: BranchRun,
    checks: TaskPackage | None = None,
) -> BranchRecord:
    """Continue the checkpoint with this branch's steering over the branch's copy, opened as
    every run is (`open_run`, kept nowhere but in the branch's record), then record its end:
    steps, verdict, files changed, prefill avoided and, with a task package as `checks`, its
    held-out checks graded on the copy."""
    record = branch_record(branches, plan, copy)
    saved = plan.record
    model = how.model
    messages = saved.checkpoint.message_list()
    checkpoint_length = len(messages)
    notice = plan.notice()
    if notice is not None:
        messages.append({"role": "user", "content": notice})
    messages.append(steering_message(record.steering))
    counts = model.count_tokens if isinstance(model, Model) else None
    prefix_tokens: list[int] = []

    def load(run: RunSession, agents: object) -> LoadedModel:
        if saved.model_restorable and isinstance(model, RestoresCheckpoints):
            restore_model_state(model, saved.checkpoint.model)
        if how.prompt_cache is not None:
            how.prompt_cache()
        shown = how.shown or model
        return LoadedModel(model, shown, identity=None, count_tokens=counts)

    def begun(run: RunSession) -> None:  # the checkpoint under today's system prompt, counted
        if counts is not None and run.continued is not None:
            prefix_tokens.append(counts(run.continued[:checkpoint_length]))

    store = ReceiptStore(copy.log)
    store.require_signer()
    opened: RunPlan[Never] = RunPlan(
        saved.checkpoint.task,
        how.policy,
        store,
        how.confirm,
        load,
        lambda loaded: how.limits or AgentLimits(),
        on_event=how.on_event,
        should_stop=how.should_stop,
        run_id=f"{saved.run_id}.{copy.name}",
        continued=messages,
        observations=list(saved.observations),
        system_prompt_anew=True,
        read_digests=plan.read_digests,  # what the model read still holds: the copy is of today's root
        via_of=how.via_of,
        read_agents=how.read_agents,
        begun=begun,
    )
    outcome = open_run(opened)
    assert outcome.run is not None  # a Ctrl-C is raised to the fork, never answered here
    run = outcome.run
    prefix = prefix_tokens[0] if prefix_tokens else None
    record = _ended(record, run, copy, list(run.responses), prefix)
    if checks is not None:
        record = _graded(record, copy, checks)
    branches.write(record)
    return record


def _ended(
    record: BranchRecord,
    run: AgentRun,
    copy: BranchCopy,
    responses: list[ResponseStats],
    prefix_tokens: int | None,
) -> BranchRecord:
    verdict = run.verdict
    avoided = responses[0].reused_tokens if responses else None
    return record.updated_with(
        state="ended",
        reason=run.reason,
        updated=utc_now(),
        steps=len(run.events),
        validation=verdict.validation,
        effects={state: len(verdict.calls(state)) for state in EFFECT_STATES},
        files_changed=changed_paths(copy),
        prefix_tokens=prefix_tokens,
        prefill_avoided=avoided,
        prefill_note=None if avoided is not None else NO_COUNTERS,
        final=run.final,
    )


def _graded(record: BranchRecord, copy: BranchCopy, package: TaskPackage) -> BranchRecord:
    """The package's held-out checks on the branch's copy, against the base at the fork."""
    from ..evals.grading import grade

    results = grade(package, copy.root, copy.base)
    return record.updated_with(
        checks_package=str(package.source),
        checks=tuple(BranchCheck(item.name, item.passed, item.detail) for item in results),
        forbidden=tuple(path for path in record.files_changed if not package.editable(path)),
    )

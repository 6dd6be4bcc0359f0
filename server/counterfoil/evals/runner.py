"""One run of one task package with one model, start to grade, in a private temporary copy.

The package decides every effect: a write inside its editable paths is approved and its
receipt says the task package approved it; any other write is refused by the policy (a rule,
not a rejection) with the reason, which the model reads; only the package's own commands are enabled, and they run confined (the
command sandbox's `confine`) unless the person said otherwise. The receipt log lives beside the
staged copy, never inside it, and is verified in full before the result is reported; a confined
command sees neither the log's folder nor any package of the evaluation (its held-out checks).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Never

from ..actions import ToolAction
from ..commands.tree.sandbox import CONFINE
from ..files.tree_copy import remove_tree, snapshot
from ..gate.approval import Approval, ApprovalDecision
from ..gate.grants import FROM_TASK_PACKAGE
from ..gate.policy import ToolPolicy
from ..gate.workspace_setup import WorkspaceSetup
from ..loop import AgentLimits, AgentRun
from ..proposals import EditProposal, ToolProposal
from ..receipts import ReceiptStore, verify_receipt_log
from ..run_start import LoadedModel, RunPlan, open_run
from ..verdict import RunVerdict
from .grading import CheckResult, Modification, forbidden_modifications, grade
from .package import PackageError, TaskPackage, stage_workspace
from .transcripts import keep_transcript

APPROVED_BY = "task package"
Generate = Callable[[list[dict[str, str]]], str]
# A run that ended for one of these reasons says nothing about the task: it is an error.
ERROR_REASONS = frozenset({"model_error", "receipt_not_recorded"})


@dataclass(frozen=True)
class RunMetrics:
    """What the run cost. Token counts are None for a model that reports none (a script)."""

    steps: int
    malformed_actions: int
    tool_errors: int
    prompt_tokens: int | None = None
    prefilled_tokens: int | None = None
    generated_tokens: int | None = None
    cached_tokens: int | None = None
    wall_seconds: float = 0.0

    @property
    def cache_reuse(self) -> float | None:
        """The share of prompt tokens a cache served."""
        if not self.prompt_tokens or self.cached_tokens is None:
            return None
        return self.cached_tokens / self.prompt_tokens


@dataclass(frozen=True)
class ReceiptCheck:
    ok: bool
    count: int
    error: str | None = None


@dataclass(frozen=True)
class TaskRun:
    """One graded run: `status` is passed, failed or error (the run could not be judged)."""

    task: str
    status: str
    reason: str
    checks: tuple[CheckResult, ...] = ()
    forbidden: tuple[Modification, ...] = ()
    receipts: ReceiptCheck = field(default_factory=lambda: ReceiptCheck(True, 0))
    verdict: RunVerdict = field(default_factory=RunVerdict)
    metrics: RunMetrics = field(default_factory=lambda: RunMetrics(0, 0, 0))
    final: str | None = None
    error: str | None = None
    harness_seconds: float = 0.0  # staging, grading and verifying: everything but the run
    transcript: str | None = None  # the kept transcript's path (None: not kept, or no run)


@contextmanager
def _scratch(task: str) -> Iterator[str]:
    """A new private folder for one run, removed after it however deep the model's tree (what
    cannot be removed is left in the temporary folder rather than the run's result lost)."""
    folder = tempfile.mkdtemp(prefix=f"counterfoil-eval-{task}-")
    try:
        yield folder
    finally:
        try:
            remove_tree(Path(folder))
        except OSError:
            pass


def package_confirm(package: TaskPackage) -> Callable[[ToolProposal], object]:
    """The package's answer to each proposal. The policy already limits commands to its own and
    refuses a change outside its editable paths, a rule and never the person's No; this answer
    keeps that rule should a proposal reach it."""
    allowed = ", ".join(package.editable_paths) or "nothing"

    def confirm(proposal: ToolProposal) -> object:
        if isinstance(proposal, EditProposal) and not package.editable(proposal.path):
            return ApprovalDecision(False, f"this task allows changes only to: {allowed}")
        return Approval(True)

    return confirm


def run_task(
    package: TaskPackage,
    generate: Generate,
    *,
    limits: AgentLimits | None = None,
    sandbox: str = CONFINE,
    hidden: tuple[Path, ...] = (),
    keep_in: Path | None = None,
    edit_form: str = "replace",
) -> TaskRun:
    """Stage, run, grade and verify one task; the person's package is only read.

    What each response cost is read from the run's own events. `limits` (default: the package's max_steps) keeps a model's
    context window; its step count is always the package's. `sandbox` is the mode the
    package's commands run in; under it they see neither this package, nor `hidden` (the
    evaluation's other packages), nor the receipt log. `keep_in`: the folder that keeps the
    run's transcript and a copy of its receipt log once the run has ended. `edit_form`: the
    setting `editForm`, how the model edits part of a file.
    """
    started = time.perf_counter()
    with _scratch(package.id) as scratch:
        root = Path(scratch) / "workspace"
        try:
            stage_workspace(package, root)
        except (OSError, PackageError) as error:
            return TaskRun(package.id, "error", "staging_failed", error=f"could not stage: {error}")
        before = snapshot(root)
        log = Path(scratch) / "receipts" / "receipts.jsonl"
        log.parent.mkdir()
        limits = replace(limits or AgentLimits(), max_steps=package.max_steps)
        run_started = time.perf_counter()
        hidden_here = (package.source, log.parent, *hidden)
        run = _opened(
            package,
            generate,
            limits,
            package_policy(package, root, sandbox, hidden_here, edit_form),
            log,
        )
        run_seconds = time.perf_counter() - run_started
        metrics = _metrics(run, run.responses, run_seconds)
        transcript = (
            None if keep_in is None else str(keep_transcript(keep_in, package.prompt, run, log))
        )
        if run.reason in ERROR_REASONS:
            return TaskRun(
                package.id,
                "error",
                run.reason,
                verdict=run.verdict,
                metrics=metrics,
                error=run.error,
                harness_seconds=time.perf_counter() - started - run_seconds,
                transcript=transcript,
            )
        forbidden = forbidden_modifications(package, before, snapshot(root))
        checks = grade(package, root, before, sandbox=sandbox, hidden=(log.parent, *hidden))
        verified = verify_receipt_log(log)
        receipts = ReceiptCheck(verified.ok, verified.count, verified.error)
    passed = all(check.passed for check in checks) and not forbidden and receipts.ok
    return TaskRun(
        package.id,
        "passed" if passed else "failed",
        run.reason,
        checks,
        forbidden,
        receipts,
        run.verdict,
        metrics,
        run.final,
        run.error,
        time.perf_counter() - started - run_seconds,
        transcript,
    )


def package_workspace(
    package: TaskPackage,
    root: Path,
    store: ReceiptStore,
    *,
    sandbox: str = CONFINE,
    hidden: tuple[Path, ...] = (),
) -> Any:
    """The gate one run of `package` on its staged copy at `root` is given (`run_task` opens
    it through `open_run`; a test or a bench takes it as it is)."""
    from ..gate.workspace import Workspace

    policy = package_policy(package, root, sandbox, hidden)
    return Workspace(policy, receipt_store=store, setup=_package_setup(package))


def package_policy(
    package: TaskPackage,
    root: Path,
    sandbox: str,
    hidden: tuple[Path, ...],
    edit_form: str = "replace",
) -> ToolPolicy:
    """What `package` allows on its staged copy at `root`: writes to its editable paths (part
    of a file edited in `edit_form`), its own commands, run in `sandbox`, which hides `hidden`
    from them."""
    return ToolPolicy(
        root,
        allow_writes=bool(package.editable_paths),
        allowed_commands=package.allowed_commands,
        allow_search=True,
        command_sandbox=sandbox,
        hidden_paths=hidden,
        granted_by=FROM_TASK_PACKAGE,
        editable_paths=tuple(package.editable_paths),
        edit_form=edit_form,
    )


def _package_setup(package: TaskPackage) -> WorkspaceSetup:
    return WorkspaceSetup(confirm_proposal=package_confirm(package), approval_via=APPROVED_BY)


def _opened(
    package: TaskPackage,
    generate: Generate,
    limits: AgentLimits,
    policy: ToolPolicy,
    log: Path,
) -> AgentRun:
    """The package's run opened as every run is (`open_run`), kept nowhere: the package
    answers each proposal, the project's AGENTS.md is read, the model is the one given."""
    plan: RunPlan[Never] = RunPlan(
        package.prompt,
        policy,
        ReceiptStore(log),
        package_confirm(package),
        lambda run, agents: LoadedModel(generate, generate, identity=None),
        lambda model: limits,
        approval_via=APPROVED_BY,
    )
    outcome = open_run(plan)
    assert outcome.run is not None  # a Ctrl-C is raised, never answered
    return outcome.run


def _metrics(run: AgentRun, responses: Sequence[object], seconds: float) -> RunMetrics:
    from ..models.usage import reused_tokens

    malformed = sum(
        1 for event in run.events if event.action is None and event.result and not event.repeated
    )
    tool_errors = sum(
        1
        for event in run.events
        if isinstance(event.action, ToolAction)
        and event.step_result is not None
        and event.step_result.is_error
    )

    def total(name: str) -> int | None:
        values = [getattr(item, name, None) for item in responses]
        if not values or not all(isinstance(value, int) for value in values):
            return None
        return sum(value for value in values if isinstance(value, int))

    reused = [reused_tokens(item) for item in responses]
    cached = (
        sum(value for value in reused if value is not None)
        if reused and all(value is not None for value in reused)
        else None
    )
    return RunMetrics(
        steps=sum(1 for event in run.events if event.opened is None),
        malformed_actions=malformed,
        tool_errors=tool_errors,
        prompt_tokens=total("prompt_tokens"),
        prefilled_tokens=total("prefilled_tokens"),
        generated_tokens=total("generated_tokens"),
        cached_tokens=cached,
        wall_seconds=round(seconds, 4),
    )

"""The run verdict comes from what the effects did: approvals, refusals, failures, validation."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import FIXTURES
from tests.support.workspaces import make_workspace

from counterfoil import AgentRun, ReceiptStore, ToolPolicy, run_agent
from counterfoil.errors import AgentError
from counterfoil.models import ScriptedModel
from counterfoil.proposals import ToolProposal
from counterfoil.receipts import EffectReceipt
from counterfoil.verdict import EffectOutcome, RunVerdict, compute_verdict

TEST = ["python", "-m", "pytest", "tests/test_math.py", "-q"]
READ_APP = {"tool": "read_file", "path": "app.py"}
FIX_APP = {"tool": "edit_file", "path": "app.py", "old": "1", "new": "2"}
BREAK_APP = {"tool": "edit_file", "path": "app.py", "old": "1", "new": "3"}
RUN_TEST = {"tool": "run_command", "argv": TEST}
FINAL = {"final": "changed and validated app.py"}


def answers(*decisions: bool) -> Callable[[ToolProposal], bool]:
    remaining = list(decisions)
    return lambda proposal: remaining.pop(0)


def run_demo(
    project: Path,
    steps: list[dict[str, object]],
    confirm: Callable[[ToolProposal], object],
    *,
    allowed: tuple[tuple[str, ...], ...] = (tuple(TEST),),
    store: ReceiptStore | None = None,
) -> AgentRun:
    policy = ToolPolicy(project, allow_writes=True, allowed_commands=allowed)
    workspace = make_workspace(policy, store=store, confirm_proposal=confirm)
    model = ScriptedModel([json.dumps(step) for step in steps])
    return run_agent("fix app.py", model, workspace)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_approved_change_followed_by_a_passing_command_is_validated(
    demo_project: Path,
) -> None:
    run = run_demo(demo_project, [READ_APP, FIX_APP, RUN_TEST, FINAL], answers(True, True))

    verdict = run.verdict
    assert verdict.approved == ("call-1", "call-2")
    assert (verdict.rejected, verdict.refused, verdict.failed) == ((), (), ())
    assert [(change.path, change.sha256) for change in verdict.files_changed] == [
        ("app.py", digest(demo_project / "app.py"))
    ]
    assert verdict.validation == "passed"
    assert verdict.validated_by == "call-2"
    assert verdict.succeeded


def test_the_verdict_replays_the_scripted_fixture_the_readme_demo_uses(
    demo_project: Path,
) -> None:
    lines = (FIXTURES / "responses" / "fix-app.jsonl").read_text().splitlines()
    run = run_demo(demo_project, [json.loads(line) for line in lines], answers(True, True))

    assert run.verdict.validation == "passed" and run.verdict.succeeded


def test_rejecting_every_proposal_is_not_a_success_whatever_the_model_says(
    demo_project: Path,
) -> None:
    run = run_demo(demo_project, [READ_APP, FIX_APP, RUN_TEST, FINAL], answers(False, False))

    assert run.completed and run.final == "changed and validated app.py"
    assert run.verdict.rejected == ("call-1", "call-2")
    assert run.verdict.files_changed == ()
    assert run.verdict.validation == "not_run"
    assert not run.verdict.succeeded


def test_a_rejected_edit_and_a_failing_command_is_failed_validation(demo_project: Path) -> None:
    run = run_demo(demo_project, [READ_APP, FIX_APP, RUN_TEST, FINAL], answers(False, True))

    assert run.verdict.rejected == ("call-1",)
    assert run.verdict.approved == ("call-2",)
    assert run.verdict.validation == "failed"
    assert not run.verdict.succeeded


def test_a_change_that_breaks_the_test_fails_validation(demo_project: Path) -> None:
    run = run_demo(demo_project, [READ_APP, BREAK_APP, RUN_TEST, FINAL], answers(True, True))

    assert run.verdict.validation == "failed"
    assert run.verdict.outcome("call-2") == EffectOutcome(
        "call-2", "run_command", "approved", argv=tuple(TEST), exit_status=1
    )


def test_a_change_with_no_command_after_it_is_not_run(demo_project: Path) -> None:
    run = run_demo(demo_project, [READ_APP, FIX_APP, FINAL], answers(True))

    assert run.verdict.validation == "not_run"
    assert run.verdict.files_changed[0].path == "app.py"
    assert not run.verdict.succeeded


def test_a_command_that_ran_before_the_last_change_is_stale(demo_project: Path) -> None:
    run = run_demo(demo_project, [READ_APP, RUN_TEST, FIX_APP, FINAL], answers(True, True))

    assert run.verdict.validation == "stale"
    assert run.verdict.validated_by == "call-1"
    assert not run.verdict.succeeded


def test_nothing_changed_and_nothing_run_is_not_run_and_a_success(demo_project: Path) -> None:
    run = run_demo(demo_project, [READ_APP, {"final": "app.py looks fine"}], answers())

    assert run.verdict == RunVerdict()
    assert run.verdict.succeeded


def test_a_command_off_the_allowlist_is_refused_before_anyone_is_asked(
    demo_project: Path,
) -> None:
    asked: list[ToolProposal] = []
    steps = [{"tool": "run_command", "argv": ["rm", "-rf", "."]}, FINAL]
    run = run_demo(demo_project, steps, lambda proposal: asked.append(proposal) or True)

    assert asked == []
    assert run.verdict.refused == ("call-1",)
    refused = run.verdict.outcome("call-1")
    assert refused is not None and refused.reason == "command is not allowed"
    assert refused.argv == ("rm", "-rf", ".")


def test_an_edit_of_a_file_never_read_is_refused(demo_project: Path) -> None:
    run = run_demo(demo_project, [FIX_APP, FINAL], answers(True))

    assert run.verdict.refused == ("call-1",)
    outcome = run.verdict.outcome("call-1")
    assert outcome is not None and outcome.path == "app.py"
    assert outcome.reason == "read the existing file before changing it"


def test_a_file_changed_during_approval_fails_the_approved_edit(demo_project: Path) -> None:
    def approve_after_someone_edits(proposal: ToolProposal) -> bool:
        (demo_project / "app.py").write_text("changed by a person\n")
        return True

    run = run_demo(demo_project, [READ_APP, FIX_APP, FINAL], approve_after_someone_edits)

    assert run.verdict.failed == ("call-1",)
    outcome = run.verdict.outcome("call-1")
    assert outcome is not None and outcome.reason == "file changed since it was read"
    assert run.verdict.files_changed == ()
    assert not run.verdict.succeeded


def test_an_allowlisted_command_that_cannot_start_fails(demo_project: Path) -> None:
    missing = ("./no-such-program",)
    steps = [{"tool": "run_command", "argv": list(missing)}, FINAL]
    run = run_demo(demo_project, steps, answers(True), allowed=(missing,))

    assert run.verdict.failed == ("call-1",)
    assert run.verdict.validation == "not_run"
    assert not run.verdict.succeeded


class UnwritableStore(ReceiptStore):
    def put(self, receipt: EffectReceipt) -> EffectReceipt:
        raise AgentError("could not open receipt log: disk full")


def test_a_write_whose_receipt_is_not_recorded_fails_but_counts_as_a_change(
    demo_project: Path,
) -> None:
    run = run_demo(demo_project, [READ_APP, FIX_APP, FINAL], answers(True), store=UnwritableStore())

    assert run.verdict.failed == ("call-1",)
    assert [change.path for change in run.verdict.files_changed] == ["app.py"]
    assert run.verdict.files_changed[0].sha256 == digest(demo_project / "app.py")


def test_the_last_command_after_the_last_change_decides() -> None:
    outcomes = [
        EffectOutcome("call-1", "edit_file", "approved", path="a.py", sha256="1" * 64),
        EffectOutcome("call-2", "run_command", "approved", argv=("t",), exit_status=1),
        EffectOutcome("call-3", "run_command", "approved", argv=("t",), exit_status=0),
        EffectOutcome("call-4", "run_command", "approved", argv=("t",), timed_out=True),
    ]
    assert compute_verdict(outcomes[:3]).validation == "passed"
    assert compute_verdict(outcomes).validation == "failed"
    assert compute_verdict(outcomes).validated_by == "call-4"


def test_files_changed_carry_the_digest_of_their_last_write() -> None:
    verdict = compute_verdict(
        [
            EffectOutcome("call-1", "write_file", "approved", path="a.py", sha256="1" * 64),
            EffectOutcome("call-2", "write_file", "approved", path="b.py", sha256="2" * 64),
            EffectOutcome("call-3", "edit_file", "approved", path="a.py", sha256="3" * 64),
        ]
    )

    assert [(c.path, c.sha256, c.call_id) for c in verdict.files_changed] == [
        ("b.py", "2" * 64, "call-2"),
        ("a.py", "3" * 64, "call-3"),
    ]


def test_the_summary_reads_validation_then_effects_then_changes(demo_project: Path) -> None:
    run = run_demo(demo_project, [READ_APP, FIX_APP, RUN_TEST, FINAL], answers(True, True))

    assert run.verdict.summary() == (
        "validation passed; 2 approved, 0 rejected, 0 refused, 0 failed; changed app.py"
    )

"""The workspace is a facade over parts it composes (the record, the path rules, the reads,
the file effects, the command effects, the approval path), not a chain of base classes; each
part returns what its call did, and the step is built from that, not from shared state."""

from __future__ import annotations

import ast
from abc import ABC
from pathlib import Path

import pytest
from tests.support.receipts import approving_workspace, write
from tests.support.workspaces import make_workspace

import counterfoil.gate
from counterfoil import AgentError, ToolAction, Workspace
from counterfoil.context.evidence import BoundedEvidenceWorkspace
from counterfoil.gate.call_record import CallRecord
from counterfoil.gate.workspace_record import WorkspaceRecord
from counterfoil.gate.workspace_setup import WorkspaceSetup
from counterfoil.proposals import ToolProposal
from counterfoil.step_facts import LinesShown, ReadFirst, SyntaxProblem
from counterfoil.steps import StepGate
from counterfoil.verdict import EffectOutcome

GATE = Path(counterfoil.gate.__file__).parent
PARTS = (
    "workspace.py",
    "workspace_record.py",
    "workspace_paths.py",
    "workspace_reads.py",
    "file_effects.py",
    "command_effects.py",
    "approved_effects.py",
    "call_record.py",
    "effect_stopped.py",
)


def test_the_workspace_inherits_only_the_gates_interface() -> None:
    assert Workspace.__mro__ == (Workspace, StepGate, ABC, object)


def test_the_bounded_evidence_wrapper_is_a_variant_of_the_same_interface() -> None:
    assert BoundedEvidenceWorkspace.__mro__[1:] == (StepGate, ABC, object)


def test_no_part_of_the_workspace_reaches_into_another_objects_private_state() -> None:
    reached = [
        f"{name}:{node.lineno} {node.attr}"
        for name in PARTS
        for node in ast.walk(ast.parse((GATE / name).read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert reached == []


def test_each_part_of_the_workspace_is_one_file_under_300_lines() -> None:
    lengths = {name: len((GATE / name).read_text().splitlines()) for name in PARTS}
    assert all(length <= 300 for length in lengths.values()), lengths


def test_what_a_workspace_is_set_up_with_is_its_parts_and_never_set_after(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(
        tmp_path, approval_via="editor", setup=WorkspaceSetup(search_engine="python")
    )

    with pytest.raises(AttributeError, match="set up when the Workspace is built"):
        workspace.search_engine = "auto"

    assert (workspace.reads.record.setup.search_engine, workspace.record.setup.approval_via) == (
        "python",
        "editor",
    )


def test_an_effect_through_the_facade_is_in_the_one_record(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)

    workspace.execute(write("notes.txt", "hi\n"))

    assert workspace.effect_outcomes == workspace.record.effect_outcomes
    assert workspace.read_digests == workspace.record.seen
    assert workspace.modified_files == ("notes.txt",)


def test_the_workspace_record_keeps_the_run_and_no_step_of_its_own(tmp_path: Path) -> None:
    record = make_workspace(tmp_path).record

    assert [name for name in vars(record) if name.startswith("step")] == []
    assert not hasattr(WorkspaceRecord, "begin_step")


def test_an_effects_step_result_comes_from_what_the_effect_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = approving_workspace(tmp_path)
    outcome = EffectOutcome("call-1", "write_file", "approved", path="a.py", sha256="0" * 64)
    syntax = SyntaxProblem("a.py", "Python", 1, "invalid syntax")
    returned = CallRecord("wrote a.py", outcome, syntax=syntax)

    def perform(proposal: ToolProposal) -> CallRecord:
        return returned

    monkeypatch.setattr(workspace.effects, "perform", perform)
    step = workspace.execute_step(write("a.py", "x = 1\n"))

    assert (step.observation, step.effect, step.syntax) == ("wrote a.py", outcome, syntax)
    assert (step.call_id, step.state, step.receipt_id) == ("call-1", "approved", None)


def test_a_read_returns_its_record_and_the_course_method_its_observation(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    workspace = make_workspace(tmp_path)

    read = workspace.reads.read_file("a.txt", 2, 2)

    assert read.lines == LinesShown(2, 2, 3)
    assert workspace.read_file("a.txt", 2, 2) == read.observation
    action = ToolAction("read_file", {"path": "a.txt", "start_line": 2, "end_line": 2})
    assert workspace.execute_step(action).lines == read.lines


def test_an_outcome_noted_before_a_no_reaches_the_step_with_the_no(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path, answer=False)

    step = workspace.execute_step(write("a.txt", "a\n"))

    assert step.effect == workspace.effect_outcomes[-1] and step.state == "rejected"
    assert step.error is not None and step.observation == f"error: {step.error}"


def test_an_outcome_noted_before_a_refusal_reaches_the_step(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("unread\n")
    workspace = approving_workspace(tmp_path)

    step = workspace.execute_step(write("a.txt", "a\n"))

    assert step.effect is not None and step.effect == workspace.effect_outcomes[-1]
    assert (step.state, step.effect.state, step.effect.path) == ("refused", "refused", "a.txt")
    assert step.detail == ReadFirst("a.txt")


def test_the_course_methods_raise_the_error_that_stopped_the_effect(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path, answer=False)

    with pytest.raises(AgentError) as raised:
        workspace.write_file("a.txt", "a\n")

    assert type(raised.value) is AgentError
    assert str(raised.value) == "operator denied the tool action"
    assert [outcome.state for outcome in workspace.effect_outcomes] == ["rejected"]

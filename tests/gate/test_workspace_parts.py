"""The workspace is a facade over parts it composes (the record, the path rules, the reads,
the file effects, the command effects, the approval path), not a chain of base classes."""

from __future__ import annotations

import ast
from abc import ABC
from pathlib import Path

from tests.support.receipts import approving_workspace, write
from tests.support.workspaces import make_workspace

import counterfoil.gate
from counterfoil import Workspace
from counterfoil.context.evidence import BoundedEvidenceWorkspace
from counterfoil.steps import StepGate

GATE = Path(counterfoil.gate.__file__).parent
PARTS = (
    "workspace.py",
    "workspace_record.py",
    "workspace_paths.py",
    "workspace_reads.py",
    "file_effects.py",
    "command_effects.py",
    "approved_effects.py",
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


def test_a_setting_put_on_the_workspace_is_held_by_the_part_that_uses_it(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path)

    workspace.search_engine = "python"
    workspace.approval_via = "editor"

    assert (workspace.reads.search_engine, workspace.record.approval_via) == ("python", "editor")


def test_an_effect_through_the_facade_is_in_the_one_record(tmp_path: Path) -> None:
    workspace = approving_workspace(tmp_path)

    workspace.execute(write("notes.txt", "hi\n"))

    assert workspace.effect_outcomes == workspace.record.effect_outcomes
    assert workspace.read_digests == workspace.record.seen
    assert workspace.modified_files == ("notes.txt",)

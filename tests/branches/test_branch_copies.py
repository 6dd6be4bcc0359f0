"""Branches in isolated copies: byte-identical logs at the fork, effects kept apart, and the
selected branch applied to the real root as approved, receipted effects naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.receipts import log_path
from tests.support.workspaces import make_workspace

from counterfoil import (
    EvaluationCase,
    FileExpectation,
    PrefixReuse,
    ReceiptStore,
    ToolAction,
    ToolPolicy,
    Workspace,
    run_branch,
    run_to_checkpoint,
    select_branch,
)
from counterfoil.branches.copies import apply_branch, branch_changes, fork_root
from counterfoil.errors import AgentError
from counterfoil.models.scripted import ScriptedModel


class ReusingScript(ScriptedModel):
    """A scripted model that says what it reused, as a branch's generator must."""

    reuse = PrefixReuse(3, (3,), 3)


def _base(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n")
    log = log_path(root)
    workspace = make_workspace(root, store=ReceiptStore(log), answer=True, allow_writes=True)
    workspace.read_file("app.py")
    assert (
        workspace.execute(ToolAction("write_file", {"path": "app.py", "content": "answer = 2\n"}))
        == "wrote app.py"
    )
    return root, log


def _branch_workspace(root: Path, log: Path) -> Workspace:
    return make_workspace(root, store=ReceiptStore(log), answer=True, allow_writes=True)


def _write(workspace: Workspace, path: str, content: str) -> str:
    if (workspace.policy.root / path).exists():
        workspace.read_file(path)
    return workspace.execute(ToolAction("write_file", {"path": path, "content": content}))


def test_a_branch_starts_with_the_parents_files_and_a_byte_identical_log(tmp_path: Path) -> None:
    root, log = _base(tmp_path)

    branch = fork_root("try-a", root, log, tmp_path / "branches")

    assert (branch.root / "app.py").read_text() == "answer = 2\n"
    assert branch.log.read_bytes() == log.read_bytes()
    assert branch_changes(branch) == ()


def test_later_effects_stay_in_their_branch(tmp_path: Path) -> None:
    root, log = _base(tmp_path)
    parent_log = log.read_bytes()
    first = fork_root("a", root, log, tmp_path / "branches")
    second = fork_root("b", root, log, tmp_path / "branches")

    assert (
        _write(_branch_workspace(first.root, first.log), "app.py", "answer = 3\n") == "wrote app.py"
    )

    assert (root / "app.py").read_text() == "answer = 2\n"
    assert (second.root / "app.py").read_text() == "answer = 2\n"
    assert log.read_bytes() == parent_log == second.log.read_bytes()
    assert first.log.read_bytes().startswith(parent_log)
    assert [change.path for change in branch_changes(first)] == ["app.py"]


def test_selection_applies_the_branch_as_approved_effects_that_name_it(tmp_path: Path) -> None:
    root, log = _base(tmp_path)
    branch = fork_root("validate-only", root, log, tmp_path / "branches")
    workspace = _branch_workspace(branch.root, branch.log)
    _write(workspace, "app.py", "answer = 3\n")
    _write(workspace, "notes.txt", "kept\n")
    asked: list[str] = []

    results = apply_branch(
        branch,
        ToolPolicy(root, allow_writes=True),
        ReceiptStore(log),
        lambda proposal: asked.append(proposal.action.arguments["path"]) or True,
    )

    assert results == ("wrote app.py", "wrote notes.txt")
    assert asked == ["app.py", "notes.txt"]
    assert (root / "app.py").read_text() == "answer = 3\n"
    receipts = ReceiptStore(log).receipts()[-2:]
    assert [r.changed_artifacts for r in receipts] == [("app.py",), ("notes.txt",)]
    assert {r.evidence.approval.via for r in receipts} == {"cli, selecting branch validate-only"}


def test_a_base_changed_since_the_fork_is_refused_and_nothing_is_applied(tmp_path: Path) -> None:
    root, log = _base(tmp_path)
    branch = fork_root("late", root, log, tmp_path / "branches")
    workspace = _branch_workspace(branch.root, branch.log)
    _write(workspace, "new.txt", "from the branch\n")
    _write(workspace, "app.py", "answer = 3\n")
    (root / "app.py").write_text("answer = 9\n")
    before = log.read_bytes()

    with pytest.raises(AgentError, match="the base changed since the fork: app.py"):
        apply_branch(
            branch, ToolPolicy(root, allow_writes=True), ReceiptStore(log), lambda _p: True
        )

    assert not (root / "new.txt").exists()
    assert log.read_bytes() == before


def test_a_file_replaced_by_an_empty_folder_is_a_change_of_the_branch(tmp_path: Path) -> None:
    root, log = _base(tmp_path)
    branch = fork_root("folded", root, log, tmp_path / "branches")
    (branch.root / "app.py").unlink()  # as a command in the branch may do
    (branch.root / "app.py").mkdir()

    assert [(change.path, change.content) for change in branch_changes(branch)] == [
        ("app.py", None)
    ]
    with pytest.raises(AgentError, match="branch folded removed app.py; apply that by hand"):
        apply_branch(
            branch, ToolPolicy(root, allow_writes=True), ReceiptStore(log), lambda _p: True
        )
    assert (root / "app.py").read_text() == "answer = 2\n"


def test_a_folder_replaced_by_a_file_is_refused_by_name(tmp_path: Path) -> None:
    root, log = _base(tmp_path)
    (root / "docs").mkdir()
    branch = fork_root("flat", root, log, tmp_path / "branches")
    (branch.root / "docs").rmdir()
    (branch.root / "docs").write_text("one file now\n")

    assert [change.path for change in branch_changes(branch)] == ["docs"]
    with pytest.raises(AgentError, match="put a file where the folder docs was"):
        apply_branch(
            branch, ToolPolicy(root, allow_writes=True), ReceiptStore(log), lambda _p: True
        )
    assert (root / "docs").is_dir()


def test_a_denied_selection_changes_nothing(tmp_path: Path) -> None:
    root, log = _base(tmp_path)
    branch = fork_root("denied", root, log, tmp_path / "branches")
    _write(_branch_workspace(branch.root, branch.log), "app.py", "answer = 3\n")

    with pytest.raises(AgentError, match="operator denied"):
        apply_branch(
            branch, ToolPolicy(root, allow_writes=True), ReceiptStore(log), lambda _p: False
        )

    assert (root / "app.py").read_text() == "answer = 2\n"


def test_two_steered_branches_from_one_checkpoint_then_the_passing_one_applied(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("answer = 1\n")
    log = log_path(root)
    prefix = ['{"tool":"read_file","path":"app.py"}']
    checkpoint = run_to_checkpoint(
        "set answer = 2", ScriptedModel(prefix), _branch_workspace(root, log)
    )
    case = EvaluationCase("done", files=(FileExpectation("app.py", "answer = 2\n"),))
    outcomes = []
    for name, new in (("two", "2"), ("three", "3")):
        branch = fork_root(name, root, log, tmp_path / "branches")
        script = [
            *prefix,
            f'{{"tool":"edit_file","path":"app.py","old":"1","new":"{new}"}}',
            '{"final":"done"}',
        ]
        workspace = _branch_workspace(branch.root, branch.log)
        workspace.read_file("app.py")
        outcomes.append(
            (
                branch,
                run_branch(
                    name,
                    "edit it",
                    checkpoint,
                    ReusingScript(script),
                    workspace,
                    workspace.receipt_store,
                    case,
                ),
            )
        )

    chosen = select_branch([outcome for _, outcome in outcomes], "two")
    with pytest.raises(AgentError, match="must pass"):
        select_branch([outcome for _, outcome in outcomes], "three")
    apply_branch(
        outcomes[0][0], ToolPolicy(root, allow_writes=True), ReceiptStore(log), lambda _p: True
    )

    assert chosen.reuse.reused_tokens == 3
    assert (root / "app.py").read_text() == "answer = 2\n"


def test_a_branch_copy_keeps_a_sparse_file_sparse(tmp_path: Path) -> None:
    from counterfoil.files.tree_copy import copy_tree

    source = tmp_path / "source"
    source.mkdir()
    size = 64 * 1024 * 1024
    with (source / "disk.img").open("wb") as image:
        image.truncate(size)
        image.write(b"head")
    if (source / "disk.img").stat().st_blocks * 512 >= size:
        pytest.skip("this file system does not keep holes")

    copy_tree(source, tmp_path / "copy")

    copied = tmp_path / "copy" / "disk.img"
    assert copied.stat().st_size == size
    assert copied.stat().st_blocks * 512 < 1024 * 1024
    assert copied.read_bytes()[:4] == b"head"

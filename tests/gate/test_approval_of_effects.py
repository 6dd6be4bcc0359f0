"""Approval: only a plain yes approves, asked once with the exact effect; a No changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.gate.gate_doubles import (
    APPEND_MARK,
    HELLO,
    Operator,
    commands,
    edit,
    run,
    sha256,
    writable,
    write,
)
from tests.support.workspaces import make_workspace

from counterfoil import (
    AgentError,
    ToolPolicy,
    ToolProposal,
)
from counterfoil.proposals import CommandProposal


class Truthy:
    def __bool__(self) -> bool:
        return True


@pytest.mark.parametrize(
    "answer",
    [1, "yes", None, False, [True], Truthy()],
    ids=["one", "yes", "none", "false", "list", "truthy-object"],
)
def test_anything_but_true_denies_a_write(tmp_path: Path, answer: object) -> None:
    operator = Operator(answer)
    workspace = writable(tmp_path, operator)
    assert workspace.execute(write("notes.md", "x\n")) == "error: operator denied the tool action"
    assert len(operator.asked) == 1
    assert not (tmp_path / "notes.md").exists()
    assert workspace.modified_files == ()
    assert workspace.receipt_store.receipts() == ()


def test_no_callback_denies_every_effect(demo_project: Path) -> None:
    workspace = make_workspace(demo_project, allow_writes=True, allowed_commands=(APPEND_MARK,))
    workspace.read_file("app.py")
    before = (demo_project / "app.py").read_bytes()
    denied = "error: operator denied the tool action"
    assert workspace.execute(write("notes.md", "x\n")) == denied
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == denied
    assert workspace.execute(run(APPEND_MARK)) == denied
    assert (demo_project / "app.py").read_bytes() == before
    assert not (demo_project / "notes.md").exists()
    assert not (demo_project / "ran.txt").exists()
    assert workspace.receipt_store.receipts() == ()


def test_denied_edit_leaves_the_file(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator(answer="yes"))
    workspace.read_file("app.py")
    before = (demo_project / "app.py").read_bytes()
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == (
        "error: operator denied the tool action"
    )
    assert (demo_project / "app.py").read_bytes() == before


def test_denied_command_does_not_run(tmp_path: Path) -> None:
    workspace = commands(tmp_path, Operator(answer=1), APPEND_MARK)
    assert workspace.execute(run(APPEND_MARK)) == "error: operator denied the tool action"
    assert not (tmp_path / "ran.txt").exists()
    assert workspace.receipt_store.receipts() == ()


def test_direct_method_denial_raises(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="^operator denied the tool action$"):
        writable(tmp_path, Operator(answer=None)).write_file("notes.md", "x\n")


def test_operator_is_asked_once_with_the_exact_write(tmp_path: Path) -> None:
    operator = Operator()
    action = write("notes.md", "x\n")
    writable(tmp_path, operator).execute(action)
    assert operator.asked == [action]


def test_operator_is_asked_once_with_the_exact_command(tmp_path: Path) -> None:
    operator = Operator()
    commands(tmp_path, operator, HELLO).execute(run(HELLO))
    assert operator.asked == [run(HELLO)]


def test_proposal_for_an_edit_shows_base_and_proposed_file(demo_project: Path) -> None:
    asked = Operator()
    never = Operator()
    policy = ToolPolicy(demo_project, allow_writes=True)
    workspace = make_workspace(policy, confirm_tool=never, confirm_proposal=asked)
    base = (demo_project / "app.py").read_bytes()
    workspace.read_file("app.py")
    action = edit("app.py", "value * 1", "value * 2")
    assert workspace.execute(action) == "edited app.py"
    assert never.asked == []
    [proposal] = asked.asked
    assert isinstance(proposal, ToolProposal)
    proposed = base.decode().replace("value * 1", "value * 2")
    assert (proposal.tool_call_id, proposal.action, proposal.kind, proposal.path) == (
        "call-1",
        action,
        "edit",
        "app.py",
    )
    assert proposal.base_text == base.decode()
    assert proposal.base_sha256 == sha256(base)
    assert proposal.proposed_text == proposed
    assert proposal.proposed_sha256 == sha256(proposed.encode())
    assert (demo_project / "app.py").read_text() == proposal.proposed_text


def test_proposal_for_a_new_file_has_no_base(tmp_path: Path) -> None:
    asked = Operator()
    workspace = make_workspace(tmp_path, confirm_proposal=asked, allow_writes=True)
    assert workspace.execute(write("notes.md", "né\n")) == "wrote notes.md"
    [proposal] = asked.asked
    assert isinstance(proposal, ToolProposal)
    assert proposal.kind == "edit" and proposal.path == "notes.md"
    assert proposal.base_text is None and proposal.base_sha256 is None
    assert proposal.proposed_text == "né\n"
    assert proposal.proposed_sha256 == sha256("né\n".encode())


def test_proposal_for_a_command_shows_argv_cwd_and_timeout(tmp_path: Path) -> None:
    asked = Operator()
    policy = ToolPolicy(tmp_path, allowed_commands=(HELLO,), command_timeout_seconds=70)
    workspace = make_workspace(policy, confirm_proposal=asked)
    workspace.execute(run(HELLO))
    [proposal] = asked.asked
    assert isinstance(proposal, ToolProposal)
    assert (proposal.kind, proposal.argv, proposal.cwd, proposal.timeout_seconds) == (
        "command",
        HELLO,
        str(tmp_path.resolve()),
        70.0,
    )
    assert isinstance(proposal, CommandProposal) and not hasattr(proposal, "proposed_text")


def test_proposal_callback_must_return_true(tmp_path: Path) -> None:
    asked = Operator(answer=1)
    workspace = make_workspace(
        tmp_path, confirm_tool=Operator(), confirm_proposal=asked, allow_writes=True
    )
    assert workspace.execute(write("notes.md", "x\n")) == ("error: operator denied the tool action")
    assert len(asked.asked) == 1
    assert not (tmp_path / "notes.md").exists()

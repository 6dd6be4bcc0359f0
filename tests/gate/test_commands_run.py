"""Commands: only an exact allowlisted argv runs, in the root, its status and output reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.gate.gate_doubles import (
    FAILING,
    HELLO,
    PYTHON,
    STDERR,
    WHERE,
    Operator,
    commands,
    edit,
    run,
    writable,
    write,
)
from tests.support.workspaces import make_workspace

from counterfoil import (
    AgentError,
    ToolPolicy,
)


@pytest.mark.parametrize(
    "argv",
    [[], [""], [PYTHON, ""], [PYTHON, "-c", "print(1)\0"]],
    ids=["empty", "empty-string", "empty-argument", "nul"],
)
def test_argv_must_be_non_empty_strings_without_nul(tmp_path: Path, argv: list[str]) -> None:
    operator = Operator()
    workspace = commands(tmp_path, operator, HELLO)
    assert workspace.execute(run(argv)) == (
        "error: argv must contain non-empty strings without NUL"
    )
    with pytest.raises(AgentError, match="^argv must contain non-empty strings without NUL$"):
        workspace.run_command(argv)
    assert operator.asked == []


def test_argv_must_be_a_list(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="^argv must contain non-empty strings without NUL$"):
        commands(tmp_path, Operator(), HELLO).run_command(" ".join(HELLO))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "argv",
    [
        [PYTHON, "-c", "print('hello') "],
        [PYTHON, "-c"],
        [PYTHON, "-c", "print('hello')", "extra"],
        ["python3", "-c", "print('hello')"],
        [PYTHON, "-c", "print('HELLO')"],
    ],
    ids=["trailing-space", "missing-argument", "extra-argument", "other-program", "case"],
)
def test_near_miss_argv_is_not_allowed(tmp_path: Path, argv: list[str]) -> None:
    operator = Operator()
    workspace = commands(tmp_path, operator, HELLO)
    assert workspace.execute(run(argv)) == "error: command is not allowed"
    assert operator.asked == []
    assert workspace.receipt_store.receipts() == ()


def test_allowed_command_reports_status_and_output(tmp_path: Path) -> None:
    workspace = commands(tmp_path, Operator(), HELLO)
    assert workspace.execute(run(HELLO)) == "status: 0\noutput:\nhello\n"


def test_direct_run_command_returns_the_observation(tmp_path: Path) -> None:
    assert commands(tmp_path, Operator(), HELLO).run_command(list(HELLO)) == (
        "status: 0\noutput:\nhello\n"
    )


def test_command_runs_in_the_root(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    workspace = commands(tmp_path, Operator(), WHERE)
    assert workspace.execute(run(WHERE)) == f"status: 0\noutput:\n{tmp_path.resolve()}\n"


def test_command_output_includes_stderr(tmp_path: Path) -> None:
    workspace = commands(tmp_path, Operator(), STDERR)
    assert workspace.execute(run(STDERR)) == "status: 0\noutput:\nto stderr\n"


def test_failing_command_reports_its_status(tmp_path: Path) -> None:
    workspace = commands(tmp_path, Operator(), FAILING)
    assert workspace.execute(run(FAILING)) == "status: 3\noutput:\nbroken\n"


@pytest.mark.parametrize("program", ["counterfoil-no-such-program", "./missing-program"])
def test_allowlisted_missing_executable_could_not_run(tmp_path: Path, program: str) -> None:
    workspace = commands(tmp_path, Operator(), (program, "--version"))
    result = workspace.execute(run([program, "--version"]))
    assert result.startswith("error: could not run command: ")


def test_command_receipt_records_argv_status_and_no_artifacts(tmp_path: Path) -> None:
    workspace = commands(tmp_path, Operator(), HELLO, FAILING)
    passed = workspace.execute(run(HELLO))
    failed = workspace.execute(run(FAILING))
    ok, error = workspace.receipt_store.receipts()
    assert (
        ok.tool_call_id,
        ok.tool,
        ok.arguments,
        ok.exit_state,
        ok.result,
        ok.changed_artifacts,
    ) == ("call-1", "run_command", {"argv": list(HELLO)}, "ok", passed, ())
    assert (
        error.tool,
        error.arguments,
        error.exit_state,
        error.result,
        error.changed_artifacts,
    ) == ("run_command", {"argv": list(FAILING)}, "error", failed, ())


def test_edit_receipt_names_exactly_its_one_path(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("y = 1\n")
    workspace = writable(tmp_path, Operator())
    workspace.read_file("./src/main.py")
    action = edit("./src/main.py", "1", "2")
    assert workspace.execute(action) == "edited src/main.py"
    [receipt] = workspace.receipt_store.receipts()
    assert (
        receipt.tool,
        receipt.arguments,
        receipt.exit_state,
        receipt.result,
        receipt.changed_artifacts,
    ) == ("edit_file", action.arguments, "ok", "edited src/main.py", ("src/main.py",))


def test_write_receipt_names_exactly_its_one_path(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    workspace.execute(write("notes.md", "x\n"))
    [receipt] = workspace.receipt_store.receipts()
    assert (receipt.tool, receipt.exit_state, receipt.result, receipt.changed_artifacts) == (
        "write_file",
        "ok",
        "wrote notes.md",
        ("notes.md",),
    )


def test_with_parent_folders_allowed_the_approval_names_them_and_the_write_creates_them(
    tmp_path: Path,
) -> None:
    asked: list[object] = []

    def confirm(proposal: object) -> bool:
        asked.append(proposal)
        return True

    policy = ToolPolicy(root=tmp_path, allow_writes=True, create_parent_folders=True)
    workspace = make_workspace(policy, confirm_proposal=confirm)
    assert workspace.execute(write("docs/guide/notes.md", "x\n")) == (
        "wrote docs/guide/notes.md (in new folders: docs, docs/guide)"
    )
    assert [p.new_folders for p in asked] == [("docs", "docs/guide")]  # type: ignore[attr-defined]
    assert (tmp_path / "docs/guide/notes.md").read_text() == "x\n"


def test_a_rejected_file_in_new_folders_creates_no_folder(tmp_path: Path) -> None:
    policy = ToolPolicy(root=tmp_path, allow_writes=True, create_parent_folders=True)
    workspace = make_workspace(policy, answer=False)
    assert workspace.execute(write("docs/notes.md", "x\n")).startswith("error:")
    assert not (tmp_path / "docs").exists()


def test_a_file_in_the_way_of_a_new_folder_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "docs").write_text("a file\n")
    policy = ToolPolicy(root=tmp_path, allow_writes=True, create_parent_folders=True)
    workspace = make_workspace(policy, answer=True)
    assert workspace.execute(write("docs/notes.md", "x\n")).startswith("error: path is not")

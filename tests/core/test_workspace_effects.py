"""Every effect is checked whole, approved once by a person, done exactly, recorded."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from counterfoil import (
    AgentError,
    EffectReceipt,
    FinalAction,
    ReceiptStore,
    ToolAction,
    ToolPolicy,
    ToolProposal,
    Workspace,
)
from counterfoil.gate.proposals import CommandProposal

PYTHON = sys.executable
HELLO = (PYTHON, "-c", "print('hello')")
FAILING = (PYTHON, "-c", "import sys; print('broken'); sys.exit(3)")
WHERE = (PYTHON, "-c", "import os; print(os.getcwd())")
STDERR = (PYTHON, "-c", "import sys; sys.stderr.write('to stderr\\n')")
APPEND_MARK = (PYTHON, "-c", "open('ran.txt', 'a').write('ran\\n')")


class Operator:
    """A person at the approval prompt: records what they were asked and gives one answer."""

    def __init__(self, answer: object = True, during: Callable[[], None] | None = None) -> None:
        self.answer = answer
        self.during = during
        self.asked: list[object] = []

    def __call__(self, request: object) -> object:
        self.asked.append(request)
        if self.during is not None:
            self.during()
        return self.answer


def writable(
    root: Path,
    operator: Operator | None = None,
    store: ReceiptStore | None = None,
    **policy: object,
) -> Workspace:
    options: dict[str, object] = {"allow_writes": True, **policy}
    return Workspace(ToolPolicy(root, **options), operator, store)  # type: ignore[arg-type]


def commands(root: Path, operator: Operator | None, *allowed: tuple[str, ...]) -> Workspace:
    return Workspace(ToolPolicy(root, allowed_commands=allowed), operator)


def write(path: str, content: str) -> ToolAction:
    return ToolAction("write_file", {"path": path, "content": content})


def edit(path: str, old: str, new: str) -> ToolAction:
    return ToolAction("edit_file", {"path": path, "old": old, "new": new})


def run(argv: tuple[str, ...] | list[str]) -> ToolAction:
    return ToolAction("run_command", {"argv": list(argv)})


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Which tools the policy offers


def test_read_only_workspace_offers_only_reads(tmp_path: Path) -> None:
    workspace = Workspace(ToolPolicy(tmp_path))
    assert workspace.available_tools == frozenset({"list_files", "read_file"})


def test_writes_add_write_and_edit(tmp_path: Path) -> None:
    workspace = Workspace(ToolPolicy(tmp_path, allow_writes=True))
    assert workspace.available_tools == frozenset(
        {"list_files", "read_file", "write_file", "edit_file"}
    )


def test_allowed_commands_add_run_command(tmp_path: Path) -> None:
    workspace = Workspace(ToolPolicy(tmp_path, allowed_commands=(HELLO,)))
    assert workspace.available_tools == frozenset({"list_files", "read_file", "run_command"})


def test_writes_and_commands_offer_every_tool(tmp_path: Path) -> None:
    workspace = Workspace(ToolPolicy(tmp_path, allow_writes=True, allowed_commands=(HELLO,)))
    assert workspace.available_tools == frozenset(
        {"list_files", "read_file", "write_file", "edit_file", "run_command"}
    )


def test_constructor_keeps_policy_callback_and_store(tmp_path: Path) -> None:
    policy = ToolPolicy(tmp_path)
    operator = Operator()
    store = ReceiptStore()
    workspace = Workspace(policy, operator, store)
    assert (workspace.policy, workspace.confirm_tool, workspace.receipt_store) == (
        policy,
        operator,
        store,
    )


def test_missing_store_means_a_fresh_in_memory_store(tmp_path: Path) -> None:
    first, second = Workspace(ToolPolicy(tmp_path)), Workspace(ToolPolicy(tmp_path))
    assert isinstance(first.receipt_store, ReceiptStore)
    assert first.receipt_store.path is None
    assert first.receipt_store is not second.receipt_store
    assert len(first.receipt_store) == 0


# The gate


@pytest.mark.parametrize(
    "action",
    [write("notes.md", "x\n"), edit("app.py", "1", "2"), run(HELLO)],
    ids=["write_file", "edit_file", "run_command"],
)
def test_disabled_tool_is_not_enabled(demo_project: Path, action: ToolAction) -> None:
    operator = Operator()
    workspace = Workspace(ToolPolicy(demo_project), operator)
    assert workspace.execute(action) == f"error: tool is not enabled: {action.tool}"
    assert operator.asked == []
    assert len(workspace.receipt_store) == 0
    assert not (demo_project / "notes.md").exists()


def test_unknown_tool_is_not_enabled(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    action = ToolAction("delete_file", {"path": "app.py"})
    assert workspace.execute(action) == "error: tool is not enabled: delete_file"


def test_gate_checks_the_arguments(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    result = workspace.execute(ToolAction("write_file", {"path": "a.md", "text": "x"}))
    assert result.startswith("error: ")
    assert operator.asked == []
    assert not (tmp_path / "a.md").exists()


def test_gate_returns_an_error_for_a_final_answer(tmp_path: Path) -> None:
    assert Workspace(ToolPolicy(tmp_path)).execute(FinalAction("done")).startswith("error: ")


def test_reads_need_no_approval_and_leave_no_receipt(demo_project: Path) -> None:
    operator = Operator(answer=False)
    workspace = writable(demo_project, operator)
    assert "def double" in workspace.execute(ToolAction("read_file", {"path": "app.py"}))
    assert "file app.py" in workspace.execute(ToolAction("list_files", {"path": "."}))
    assert operator.asked == []
    assert workspace.receipt_store.receipts() == ()
    assert workspace.modified_files == ()


# Writing and editing


def test_direct_write_is_refused_when_writes_are_off(tmp_path: Path) -> None:
    workspace = Workspace(ToolPolicy(tmp_path), Operator())
    with pytest.raises(AgentError, match="^writes are not enabled$"):
        workspace.write_file("notes.md", "x\n")
    assert not (tmp_path / "notes.md").exists()


def test_direct_edit_is_refused_when_writes_are_off(demo_project: Path) -> None:
    workspace = Workspace(ToolPolicy(demo_project), Operator())
    workspace.read_file("app.py")
    before = (demo_project / "app.py").read_bytes()
    with pytest.raises(AgentError, match="^writes are not enabled$"):
        workspace.edit_file("app.py", "1", "2")
    assert (demo_project / "app.py").read_bytes() == before


def test_write_creates_a_new_file_with_exactly_the_content(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    assert workspace.execute(write("notes.md", "café\nno newline at end")) == "wrote notes.md"
    assert (tmp_path / "notes.md").read_bytes() == "café\nno newline at end".encode()


def test_write_reports_the_normalised_relative_path(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    workspace = writable(tmp_path, Operator())
    assert workspace.execute(write("./src/new.py", "x = 1\n")) == "wrote src/new.py"
    assert workspace.modified_files == ("src/new.py",)


def test_write_over_an_unread_file_is_refused(demo_project: Path) -> None:
    operator = Operator()
    workspace = writable(demo_project, operator)
    before = (demo_project / "app.py").read_bytes()
    assert workspace.execute(write("app.py", "x = 1\n")) == (
        "error: read the existing file before changing it"
    )
    assert (demo_project / "app.py").read_bytes() == before
    assert operator.asked == []


def test_edit_of_an_unread_file_is_refused(demo_project: Path) -> None:
    operator = Operator()
    workspace = writable(demo_project, operator)
    before = (demo_project / "app.py").read_bytes()
    assert workspace.execute(edit("app.py", "* 1", "* 2")) == (
        "error: read the existing file before changing it"
    )
    assert (demo_project / "app.py").read_bytes() == before
    assert operator.asked == []


def test_direct_edit_of_an_unread_file_raises(demo_project: Path) -> None:
    with pytest.raises(AgentError, match="^read the existing file before changing it$"):
        writable(demo_project, Operator()).edit_file("app.py", "* 1", "* 2")


def test_listing_a_file_does_not_count_as_reading_it(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.list_files()
    assert workspace.execute(edit("app.py", "* 1", "* 2")) == (
        "error: read the existing file before changing it"
    )


def test_write_over_a_read_file_replaces_it(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.read_file("greeting.py")
    assert workspace.execute(write("greeting.py", "GREETING = 'Welcome'\n")) == (
        "wrote greeting.py"
    )
    assert (demo_project / "greeting.py").read_text() == "GREETING = 'Welcome'\n"


def test_edit_replaces_the_one_occurrence(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    before = (demo_project / "app.py").read_text()
    workspace.read_file("app.py")
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == "edited app.py"
    assert (demo_project / "app.py").read_text() == before.replace("value * 1", "value * 2")


def test_read_through_a_dot_path_allows_an_edit_of_the_plain_path(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.read_file("./app.py")
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == "edited app.py"


def test_new_file_needs_an_existing_parent(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    assert workspace.execute(write("missing/notes.md", "x\n")) == (
        "error: parent directory does not exist"
    )
    assert not (tmp_path / "missing").exists()
    assert operator.asked == []


def test_edit_of_a_missing_file_is_not_accessible(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    assert workspace.execute(edit("missing.py", "a", "b")) == "error: path is not accessible"
    assert not (tmp_path / "missing.py").exists()


def test_write_over_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    operator = Operator()
    workspace = writable(tmp_path, operator)
    assert workspace.execute(write("src", "x\n")).startswith("error: ")
    assert (tmp_path / "src").is_dir()
    assert operator.asked == []


@pytest.mark.parametrize("old", ["value = 2", "value", ""], ids=["absent", "twice", "empty"])
def test_edit_old_text_must_occur_exactly_once(tmp_path: Path, old: str) -> None:
    (tmp_path / "config.py").write_text("value = 1\nvalue = 1\n")
    operator = Operator()
    workspace = writable(tmp_path, operator)
    workspace.read_file("config.py")
    assert workspace.execute(edit("config.py", old, "changed")) == (
        "error: old text must occur exactly once"
    )
    assert (tmp_path / "config.py").read_text() == "value = 1\nvalue = 1\n"
    assert operator.asked == []


def test_direct_edit_with_ambiguous_old_text_raises(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("a = 1\nb = 1\n")
    workspace = writable(tmp_path, Operator())
    workspace.read_file("config.py")
    with pytest.raises(AgentError, match="^old text must occur exactly once$"):
        workspace.edit_file("config.py", "1", "2")


def test_write_over_the_limit_is_refused_before_approval(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator, max_write_bytes=10)
    assert workspace.execute(write("notes.md", "x" * 11)) == "error: write exceeds 10 bytes"
    assert operator.asked == []
    assert not (tmp_path / "notes.md").exists()
    assert len(workspace.receipt_store) == 0


def test_write_at_the_limit_is_allowed(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator(), max_write_bytes=10)
    assert workspace.execute(write("notes.md", "x" * 10)) == "wrote notes.md"


def test_write_limit_counts_utf8_bytes(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator, max_write_bytes=10)
    assert workspace.execute(write("notes.md", "é" * 6)) == "error: write exceeds 10 bytes"
    assert operator.asked == []


def test_edit_limit_measures_the_whole_proposed_file(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("value = 1\n")
    operator = Operator()
    workspace = writable(tmp_path, operator, max_write_bytes=12)
    workspace.read_file("config.py")
    assert workspace.execute(edit("config.py", "1", "1234")) == "error: write exceeds 12 bytes"
    assert operator.asked == []
    assert (tmp_path / "config.py").read_text() == "value = 1\n"
    assert workspace.execute(edit("config.py", "1", "123")) == "edited config.py"
    assert (tmp_path / "config.py").read_text() == "value = 123\n"


def test_edit_refuses_bytes_changed_after_the_read(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.read_file("app.py")
    (demo_project / "app.py").write_text("def double(value):\n    return value * 1  # mine\n")
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == (
        "error: file changed since it was read"
    )
    assert (demo_project / "app.py").read_text().endswith("# mine\n")
    assert workspace.modified_files == ()


def test_write_refuses_bytes_changed_after_the_read(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.read_file("greeting.py")
    (demo_project / "greeting.py").write_text("GREETING = 'Hi'\n")
    assert workspace.execute(write("greeting.py", "GREETING = 'Welcome'\n")) == (
        "error: file changed since it was read"
    )
    assert (demo_project / "greeting.py").read_text() == "GREETING = 'Hi'\n"


def test_edit_refuses_bytes_changed_during_approval(demo_project: Path) -> None:
    target = demo_project / "app.py"
    theirs = "def double(value):\n    return value * 1  # changed while asking\n"
    operator = Operator(during=lambda: target.write_text(theirs))
    workspace = writable(demo_project, operator)
    workspace.read_file("app.py")
    names_before = sorted(os.listdir(demo_project))
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == (
        "error: file changed since it was read"
    )
    assert len(operator.asked) == 1
    assert target.read_text() == theirs
    assert sorted(os.listdir(demo_project)) == names_before
    assert workspace.modified_files == ()
    assert workspace.receipt_store.receipts() == ()


def test_write_refuses_a_file_created_during_approval(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    operator = Operator(during=lambda: target.write_text("someone else's notes\n"))
    workspace = writable(tmp_path, operator)
    assert workspace.execute(write("notes.md", "mine\n")) == (
        "error: file changed since it was read"
    )
    assert target.read_text() == "someone else's notes\n"
    assert os.listdir(tmp_path) == ["notes.md"]
    assert workspace.modified_files == ()


def test_edit_refuses_a_file_removed_during_approval(demo_project: Path) -> None:
    target = demo_project / "app.py"
    workspace = writable(demo_project, Operator(during=target.unlink))
    workspace.read_file("app.py")
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == (
        "error: file changed since it was read"
    )
    assert not target.exists()


@pytest.mark.parametrize("failing", ["replace", "fsync", "write"])
def test_failed_replace_leaves_the_file_and_no_temporary_file(
    demo_project: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = demo_project / "app.py"
    before = target.read_bytes()
    names_before = sorted(os.listdir(demo_project))
    workspace = writable(demo_project, Operator())
    workspace.read_file("app.py")

    def broken(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, failing, broken)
    result = workspace.execute(edit("app.py", "value * 1", "value * 2"))
    monkeypatch.undo()
    assert result.startswith("error: ")
    assert target.read_bytes() == before
    assert sorted(os.listdir(demo_project)) == names_before
    assert workspace.modified_files == ()
    assert workspace.receipt_store.receipts() == ()


def test_refused_effects_leave_no_temporary_files(demo_project: Path) -> None:
    names_before = sorted(os.listdir(demo_project))
    workspace = writable(demo_project, Operator(answer=False), max_write_bytes=200)
    workspace.read_file("app.py")
    workspace.execute(edit("app.py", "value * 1", "value * 2"))
    workspace.execute(edit("app.py", "absent", "x"))
    workspace.execute(write("app.py", "x" * 201))
    workspace.execute(write("new.py", "x = 1\n"))
    assert sorted(os.listdir(demo_project)) == names_before


def test_successful_edit_leaves_no_temporary_file(demo_project: Path) -> None:
    names_before = sorted(os.listdir(demo_project))
    workspace = writable(demo_project, Operator())
    workspace.read_file("app.py")
    workspace.execute(edit("app.py", "value * 1", "value * 2"))
    assert sorted(os.listdir(demo_project)) == names_before


def test_edit_preserves_permission_bits(demo_project: Path) -> None:
    target = demo_project / "app.py"
    target.chmod(0o754)
    workspace = writable(demo_project, Operator())
    workspace.read_file("app.py")
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == "edited app.py"
    assert stat.S_IMODE(target.stat().st_mode) == 0o754


def test_write_over_an_existing_file_preserves_permission_bits(demo_project: Path) -> None:
    target = demo_project / "validate.py"
    target.chmod(0o700)
    workspace = writable(demo_project, Operator())
    workspace.read_file("validate.py")
    assert workspace.execute(write("validate.py", "print('ok')\n")) == "wrote validate.py"
    assert stat.S_IMODE(target.stat().st_mode) == 0o700


def test_second_edit_needs_no_new_read(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.read_file("app.py")
    assert workspace.execute(edit("app.py", "value * 1", "value * 2")) == "edited app.py"
    assert workspace.execute(edit("app.py", "value * 2", "value + value")) == "edited app.py"
    assert "return value + value" in (demo_project / "app.py").read_text()


def test_edit_after_own_write_needs_no_read(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    workspace.execute(write("notes.md", "draft\n"))
    assert workspace.execute(edit("notes.md", "draft", "final")) == "edited notes.md"
    assert (tmp_path / "notes.md").read_text() == "final\n"


def test_modified_files_are_sorted_and_listed_once(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator())
    workspace.read_file("greeting.py")
    workspace.read_file("app.py")
    workspace.execute(write("greeting.py", "GREETING = 'Welcome'\n"))
    workspace.execute(write("NOTES.md", "why\n"))
    workspace.execute(edit("app.py", "value * 1", "value * 2"))
    workspace.execute(edit("app.py", "value * 2", "value + value"))
    workspace.execute(write("tests/test_notes.py", "def test_x(): pass\n"))
    assert workspace.modified_files == ("NOTES.md", "app.py", "greeting.py", "tests/test_notes.py")


def test_failed_effects_are_not_modified_files(demo_project: Path) -> None:
    workspace = writable(demo_project, Operator(answer=False))
    workspace.read_file("app.py")
    workspace.execute(edit("app.py", "value * 1", "value * 2"))
    workspace.execute(write("notes.md", "x\n"))
    assert workspace.modified_files == ()


# Tool call ids


def test_effects_get_call_ids_counting_from_one(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    workspace.execute(write("a.md", "a\n"))
    workspace.execute(write("b.md", "b\n"))
    store = workspace.receipt_store
    assert [receipt.tool_call_id for receipt in store.receipts()] == ["call-1", "call-2"]
    assert store.get("call-1").result == "wrote a.md"  # type: ignore[union-attr]
    assert store.get("call-2").result == "wrote b.md"  # type: ignore[union-attr]


def test_direct_effect_methods_allocate_ids_and_record_receipts(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    assert workspace.write_file("a.md", "a\n") == "wrote a.md"
    assert workspace.edit_file("a.md", "a", "b") == "edited a.md"
    assert [
        (receipt.tool_call_id, receipt.tool) for receipt in workspace.receipt_store.receipts()
    ] == [("call-1", "write_file"), ("call-2", "edit_file")]


def test_call_ids_skip_ids_already_in_the_store(tmp_path: Path) -> None:
    store = ReceiptStore()
    for taken in ("call-1", "call-2", "call-4"):
        store.put(
            EffectReceipt(
                taken, "write_file", {"path": "x", "content": ""}, "ok", "wrote x", ("x",)
            )
        )
    workspace = writable(tmp_path, Operator(), store)
    workspace.execute(write("a.md", "a\n"))
    workspace.execute(write("b.md", "b\n"))
    assert store.get("call-3").result == "wrote a.md"  # type: ignore[union-attr]
    assert store.get("call-5").result == "wrote b.md"  # type: ignore[union-attr]


def test_call_ids_continue_after_a_reopened_log(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    log = tmp_path / "receipts.jsonl"
    writable(tmp_path / "project", Operator(), ReceiptStore(log)).execute(write("a.md", "a\n"))
    reopened = ReceiptStore(log)
    writable(tmp_path / "project", Operator(), reopened).execute(write("b.md", "b\n"))
    assert [(receipt.tool_call_id, receipt.result) for receipt in reopened.receipts()] == [
        ("call-1", "wrote a.md"),
        ("call-2", "wrote b.md"),
    ]


def test_call_id_is_used_even_when_the_call_is_denied(tmp_path: Path) -> None:
    operator = Operator(answer=False)
    workspace = writable(tmp_path, operator)
    assert workspace.execute(write("a.md", "a\n")) == "error: operator denied the tool action"
    operator.answer = True
    workspace.execute(write("b.md", "b\n"))
    store = workspace.receipt_store
    assert store.get("call-1") is None
    assert store.get("call-2").result == "wrote b.md"  # type: ignore[union-attr]


def test_call_id_is_used_even_when_the_call_is_refused(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    assert workspace.execute(write("missing/a.md", "a\n")).startswith("error: ")
    workspace.execute(write("b.md", "b\n"))
    assert [receipt.tool_call_id for receipt in workspace.receipt_store.receipts()] == ["call-2"]


def test_given_tool_call_id_names_the_receipt(tmp_path: Path) -> None:
    workspace = writable(tmp_path, Operator())
    workspace.execute(write("a.md", "a\n"), "editor-7")
    assert workspace.receipt_store.get("editor-7").result == "wrote a.md"  # type: ignore[union-attr]
    assert workspace.receipt_store.get("call-1") is None


def test_same_id_and_action_returns_the_stored_result_without_asking(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    action = write("notes.md", "first\n")
    assert workspace.execute(action, "retry-1") == "wrote notes.md"
    (tmp_path / "notes.md").write_text("edited by hand\n")
    assert workspace.execute(action, "retry-1") == "wrote notes.md"
    assert (tmp_path / "notes.md").read_text() == "edited by hand\n"
    assert len(operator.asked) == 1
    assert len(workspace.receipt_store) == 1


def test_same_id_and_command_is_not_run_again(tmp_path: Path) -> None:
    operator = Operator()
    workspace = commands(tmp_path, operator, APPEND_MARK)
    first = workspace.execute(run(APPEND_MARK), "check-1")
    assert workspace.execute(run(APPEND_MARK), "check-1") == first
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
    assert len(operator.asked) == 1


def test_stored_result_is_returned_by_a_later_workspace_on_the_same_log(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    log = tmp_path / "receipts.jsonl"
    action = write("notes.md", "first\n")
    writable(tmp_path / "project", Operator(), ReceiptStore(log)).execute(action, "retry-1")
    later = Operator(answer=False)
    workspace = writable(tmp_path / "project", later, ReceiptStore(log))
    assert workspace.execute(action, "retry-1") == "wrote notes.md"
    assert later.asked == []


def test_same_id_for_another_action_is_refused(tmp_path: Path) -> None:
    operator = Operator()
    workspace = writable(tmp_path, operator)
    workspace.execute(write("notes.md", "first\n"), "call-a")
    assert workspace.execute(write("notes.md", "second\n"), "call-a") == (
        "error: tool call id was already used for another action"
    )
    assert workspace.execute(write("other.md", "first\n"), "call-a") == (
        "error: tool call id was already used for another action"
    )
    assert (tmp_path / "notes.md").read_text() == "first\n"
    assert not (tmp_path / "other.md").exists()
    assert len(operator.asked) == 1


# Approval


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
    workspace = Workspace(
        ToolPolicy(demo_project, allow_writes=True, allowed_commands=(APPEND_MARK,))
    )
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
    workspace = Workspace(policy, never, confirm_proposal=asked)
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
    workspace = Workspace(ToolPolicy(tmp_path, allow_writes=True), confirm_proposal=asked)
    assert workspace.execute(write("notes.md", "né\n")) == "wrote notes.md"
    [proposal] = asked.asked
    assert isinstance(proposal, ToolProposal)
    assert proposal.kind == "edit" and proposal.path == "notes.md"
    assert proposal.base_text is None and proposal.base_sha256 is None
    assert proposal.proposed_text == "né\n"
    assert proposal.proposed_sha256 == sha256("né\n".encode())


def test_proposal_for_a_command_shows_argv_cwd_and_timeout(tmp_path: Path) -> None:
    asked = Operator()
    policy = ToolPolicy(tmp_path, allowed_commands=(HELLO,), command_timeout_seconds=7)
    workspace = Workspace(policy, confirm_proposal=asked)
    workspace.execute(run(HELLO))
    [proposal] = asked.asked
    assert isinstance(proposal, ToolProposal)
    assert (proposal.kind, proposal.argv, proposal.cwd, proposal.timeout_seconds) == (
        "command",
        HELLO,
        str(tmp_path.resolve()),
        7.0,
    )
    assert isinstance(proposal, CommandProposal) and not hasattr(proposal, "proposed_text")


def test_proposal_callback_must_return_true(tmp_path: Path) -> None:
    asked = Operator(answer=1)
    workspace = Workspace(
        ToolPolicy(tmp_path, allow_writes=True), Operator(), confirm_proposal=asked
    )
    assert workspace.execute(write("notes.md", "x\n")) == ("error: operator denied the tool action")
    assert len(asked.asked) == 1
    assert not (tmp_path / "notes.md").exists()


# Commands


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
    workspace = Workspace(policy, confirm_proposal=confirm)
    assert workspace.execute(write("docs/guide/notes.md", "x\n")) == (
        "wrote docs/guide/notes.md (in new folders: docs, docs/guide)"
    )
    assert [p.new_folders for p in asked] == [("docs", "docs/guide")]  # type: ignore[attr-defined]
    assert (tmp_path / "docs/guide/notes.md").read_text() == "x\n"


def test_a_rejected_file_in_new_folders_creates_no_folder(tmp_path: Path) -> None:
    policy = ToolPolicy(root=tmp_path, allow_writes=True, create_parent_folders=True)
    workspace = Workspace(policy, confirm_proposal=lambda proposal: False)
    assert workspace.execute(write("docs/notes.md", "x\n")).startswith("error:")
    assert not (tmp_path / "docs").exists()


def test_a_file_in_the_way_of_a_new_folder_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "docs").write_text("a file\n")
    policy = ToolPolicy(root=tmp_path, allow_writes=True, create_parent_folders=True)
    workspace = Workspace(policy, confirm_proposal=lambda proposal: True)
    assert workspace.execute(write("docs/notes.md", "x\n")).startswith("error: path is not")

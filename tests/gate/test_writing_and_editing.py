"""Writes and edits: exactly the bytes approved, on bytes the model read, replaced atomically."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from tests.gate.gate_doubles import (
    Operator,
    edit,
    writable,
    write,
)
from tests.support.workspaces import make_workspace

from counterfoil import (
    AgentError,
)


def test_direct_write_is_refused_when_writes_are_off(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, confirm_tool=Operator())
    with pytest.raises(AgentError, match="^writes are not enabled$"):
        workspace.write_file("notes.md", "x\n")
    assert not (tmp_path / "notes.md").exists()


def test_direct_edit_is_refused_when_writes_are_off(demo_project: Path) -> None:
    workspace = make_workspace(demo_project, confirm_tool=Operator())
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

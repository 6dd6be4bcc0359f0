"""What a refused step tells the model beyond the course's words, each a fact on the step's
record that the observation is built from: the paths near a missing one, the file to read
first, where an edit's old text nearly is, and a value copied from the tool examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import AgentError, ToolAction
from counterfoil.step_facts import (
    Difference,
    EditMiss,
    NoSuchPath,
    Placeholder,
    ReadFirst,
    SameMeaning,
)


def read(path: str) -> ToolAction:
    return ToolAction("read_file", {"path": path})


def edit(path: str, old: str, new: str) -> ToolAction:
    return ToolAction("edit_file", {"path": path, "old": old, "new": new})


def test_a_missing_path_names_the_closest_existing_paths(tmp_path: Path) -> None:
    for name in ("answer.py", "README.md", "notes/todo.txt", "apps.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")

    step = make_workspace(tmp_path).execute_step(read("app.py"))

    assert isinstance(step.detail, NoSuchPath) and step.detail.path == "app.py"
    assert step.detail.nearby[:2] == ("apps.py", "answer.py") and len(step.detail.nearby) == 3
    assert step.observation == "error: path is not accessible"  # the course's words
    assert step.model_text() == "error: " + step.detail.sentence()
    assert step.model_text().startswith("error: no such file: app.py; nearby: apps.py, answer.py")
    assert step.state == "refused"


def test_a_missing_path_never_names_a_protected_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SECRET=1")
    (tmp_path / "env.py").write_text("x")

    step = make_workspace(tmp_path).execute_step(read(".envrc.py"))

    assert step.model_text() == "error: path is not accessible"  # protected: refused by name
    assert make_workspace(tmp_path).execute_step(read("envs.py")).detail == NoSuchPath(
        "envs.py", ("env.py",)
    )


def test_the_direct_method_keeps_the_course_sentence_for_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="^path is not accessible$"):
        make_workspace(tmp_path).read_file("missing.py")


def test_a_change_before_a_read_names_the_file_to_read(tmp_path: Path) -> None:
    (tmp_path / "flags.json").write_text("{}")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)

    step = workspace.execute_step(ToolAction("write_file", {"path": "flags.json", "content": "1"}))

    assert step.detail == ReadFirst("flags.json")
    assert step.observation == "error: read the existing file before changing it"
    assert step.model_text().startswith("error: read the existing file before changing it: ")
    assert "flags.json" in step.model_text()


def test_an_edit_whose_old_text_is_missing_shows_the_closest_lines(tmp_path: Path) -> None:
    (tmp_path / "flags.json").write_text('{\n  "name": "x",\n  "beta_search": false\n}\n')
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.read_file("flags.json")

    step = workspace.execute_step(edit("flags.json", '"beta_search: false', '"beta_search": true'))

    assert step.detail == EditMiss(
        "flags.json",
        0,
        3,
        ('  "beta_search": false',),
        (Difference('"beta_search:', '"beta_search":'),),
    )
    assert step.observation == "error: old text must occur exactly once"
    assert "found 0 times" in step.model_text()
    assert json.dumps('  "beta_search": false') in step.model_text()  # as old must spell it


def test_the_closest_text_may_be_a_line_longer_than_old(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("A = 41\n\nraise RuntimeError('no')\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.read_file("a.py")

    step = workspace.execute_step(edit("a.py", "A = 41\nraise RuntimeError('no')", "A = 42"))

    assert isinstance(step.detail, EditMiss)
    assert (step.detail.first_line, step.detail.lines) == (
        1,
        ("A = 41", "", "raise RuntimeError('no')"),
    )


def test_an_edit_whose_old_text_repeats_says_how_often_and_where(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.read_file("a.py")

    step = workspace.execute_step(edit("a.py", "x = 1", "x = 3"))

    assert step.detail == EditMiss("a.py", 2, at_lines=(1, 3))
    assert "found 2 times (at lines 1, 3)" in step.model_text()


def test_the_direct_edit_keeps_the_course_sentence(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.read_file("a.py")

    with pytest.raises(AgentError, match="^old text must occur exactly once$"):
        workspace.edit_file("a.py", "y = 1", "y = 2")


def test_a_value_copied_from_the_examples_is_refused_as_a_placeholder(tmp_path: Path) -> None:
    step = make_workspace(tmp_path).execute_step(read("<file>"))

    assert step.detail == Placeholder("path", "<file>")
    assert step.model_text() == "error: " + Placeholder("path", "<file>").sentence()


def test_a_file_that_did_not_parse_before_is_not_repeated(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("not json\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(read("config.json"))

    step = workspace.execute_step(
        ToolAction("write_file", {"path": "config.json", "content": "still not"})
    )

    assert step.syntax is not None and step.syntax.before is None
    assert step.syntax.sentence().endswith("Read it and fix it before you finish.")


@pytest.mark.parametrize(
    ("name", "before", "after", "language"),
    [
        (
            "config.json",
            '{\n  "parser": {\n    "strict": false\n  }\n}\n',
            '{"parser":{"strict":false}}',
            "JSON",
        ),
        (
            "answer.py",
            'ANSWER = 41\n\nraise RuntimeError("x")\n',
            "ANSWER = 41\nraise RuntimeError('x')",
            "Python",
        ),
        ("pyproject.toml", "[tool]\nx = 1\n", "[tool]\nx = 1  # kept\n", "TOML"),
    ],
)
def test_a_write_that_changes_only_the_layout_says_the_meaning_is_the_same(
    tmp_path: Path, name: str, before: str, after: str, language: str
) -> None:
    """The 1.5B rewrote config.json and answer.py in its own layout with the value the task
    asked it to change untouched, and finished: the step says nothing that matters changed."""
    (tmp_path / name).write_text(before)
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(read(name))

    step = workspace.execute_step(ToolAction("write_file", {"path": name, "content": after}))

    assert step.observation == f"wrote {name}"
    assert step.same == SameMeaning(name, language)
    assert step.same.sentence().endswith(
        "only its layout differs. Nothing in it that the task asks to change has changed yet."
    )


def test_a_write_that_changes_a_value_or_creates_a_file_is_not_the_same(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"strict": false}\n')
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(read("config.json"))

    changed = ToolAction("write_file", {"path": "config.json", "content": '{"strict":true}'})
    created = ToolAction("write_file", {"path": "new.json", "content": "{}"})

    assert workspace.execute_step(changed).same is None
    assert workspace.execute_step(created).same is None

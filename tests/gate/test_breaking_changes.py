"""A write or an edit that would leave a parseable file unparseable is refused before the person
is asked: the model is told where the parser stopped, its text around that line and what the
file was; nothing is proposed, written or receipted as an effect. A file that did not parse
before, and the text a person approves instead of the proposal, are written and told after."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.workspaces import make_workspace

from counterfoil import ToolAction
from counterfoil.gate.approval import Approval
from counterfoil.gate.syntax import yaml_checked
from counterfoil.receipts import ReceiptStore
from counterfoil.step_facts import BreaksFile
from counterfoil.steps import StepResult


def read(path: str) -> ToolAction:
    return ToolAction("read_file", {"path": path})


def write(path: str, content: str) -> ToolAction:
    return ToolAction("write_file", {"path": path, "content": content})


def edit(path: str, old: str, new: str) -> ToolAction:
    return ToolAction("edit_file", {"path": path, "old": old, "new": new})


class Asked:
    """The person: counts the proposals shown and approves each."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, _proposal: object) -> Approval:
        self.count += 1
        return Approval(True)


def breaking(step: StepResult) -> BreaksFile:
    assert isinstance(step.detail, BreaksFile), step.observation
    return step.detail


@pytest.mark.parametrize(
    ("name", "before", "after", "language", "line"),
    [
        ("config.json", '{"strict": false}\n', '{"strict": true,}\n', "JSON", 1),
        ("app.py", "def f():\n    return 1\n", "def f(:\n    return 1\n", "Python", 1),
        ("pyproject.toml", "[tool]\nx = 1\n", "[tool]\nx = \n", "TOML", 2),
    ],
)
def test_a_write_that_breaks_a_parseable_file_is_refused_before_anyone_is_asked(
    tmp_path: Path, name: str, before: str, after: str, language: str, line: int
) -> None:
    (tmp_path / name).write_text(before)
    asked = Asked()
    store = ReceiptStore(tmp_path.parent / f"{tmp_path.name}-receipts.jsonl")
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=asked, store=store)
    workspace.execute_step(read(name))

    step = workspace.execute_step(write(name, after))

    detail = breaking(step)
    assert (detail.problem.language, detail.problem.line, detail.problem.before) == (
        language,
        line,
        before,
    )
    assert step.state == "refused" and asked.count == 0
    assert (tmp_path / name).read_text() == before
    assert store.get(step.call_id or "") is None and workspace.modified_files == ()


def test_the_model_is_told_the_line_the_lines_around_it_and_what_the_file_was(
    tmp_path: Path,
) -> None:
    text = "".join(f"value_{number} = {number}\n" for number in range(1, 9))
    (tmp_path / "values.py").write_text(text)
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(read("values.py"))

    step = workspace.execute_step(edit("values.py", "value_5 = 5\n", 'value_5 = "five\n'))

    told = step.model_text()
    assert told.startswith(
        "error: refused: your edit_file would leave values.py not valid Python at line 5:"
    )
    assert '\n   3| value_3 = 3\n   4| value_4 = 4\n   5| value_5 = "five\n' in told
    assert "   7| value_7 = 7\n" in told and "   8|" not in told
    assert "Before, values.py was valid Python, as a JSON string:" in told


def test_a_new_file_that_does_not_parse_is_refused_and_said_to_be_new(tmp_path: Path) -> None:
    asked = Asked()
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=asked)

    step = workspace.execute_step(write("settings.json", "strict = true\n"))

    assert breaking(step).new and asked.count == 0
    assert "settings.json is a new file: its text must be valid JSON." in step.model_text()
    assert not (tmp_path / "settings.json").exists()


def test_a_change_to_a_file_that_did_not_parse_before_is_asked_and_told_after(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.json").write_text("not json\n")
    asked = Asked()
    workspace = make_workspace(tmp_path, allow_writes=True, confirm_proposal=asked)
    workspace.execute_step(read("config.json"))

    step = workspace.execute_step(write("config.json", "still not\n"))

    assert step.observation == "wrote config.json" and asked.count == 1
    assert step.syntax is not None and step.syntax.language == "JSON"


def test_text_the_person_approved_in_place_of_the_proposal_is_written_and_told_after(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.json").write_text('{"strict": false}\n')
    workspace = make_workspace(
        tmp_path,
        allow_writes=True,
        confirm_proposal=lambda _proposal: Approval(True, text='{"strict": tru\n'),
    )
    workspace.execute_step(read("config.json"))

    step = workspace.execute_step(write("config.json", '{"strict": true}\n'))

    assert step.state == "approved" and step.syntax is not None
    assert (tmp_path / "config.json").read_text() == '{"strict": tru\n'


def test_a_file_type_the_settings_add_is_checked_too(tmp_path: Path) -> None:
    (tmp_path / ".babelrc").write_text('{"presets": []}\n')
    workspace = make_workspace(
        tmp_path, allow_writes=True, answer=True, parsed_files=("*.babelrc=json",)
    )
    workspace.execute_step(read(".babelrc"))

    step = workspace.execute_step(write(".babelrc", "presets: env\n"))

    assert breaking(step).problem.language == "JSON"


def test_a_file_of_no_checked_type_is_written_whatever_it_holds(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)

    step = workspace.execute_step(write("notes.txt", '{"not": json'))

    assert step.observation == "wrote notes.txt"


@pytest.mark.skipif(not yaml_checked(), reason="YAML is checked only where PyYAML is installed")
def test_a_yaml_file_is_checked_where_pyyaml_is_installed(tmp_path: Path) -> None:
    (tmp_path / "ci.yml").write_text("steps:\n  - run: test\n")
    workspace = make_workspace(tmp_path, allow_writes=True, answer=True)
    workspace.execute_step(read("ci.yml"))

    step = workspace.execute_step(edit("ci.yml", "  - run: test\n", "  - run: [test\n"))

    assert breaking(step).problem.language == "YAML"

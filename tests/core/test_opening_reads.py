"""The short files a task names are read for the model before its first step: through the gate,
as step-0 events, in the conversation as if the model had asked for them."""

from __future__ import annotations

from pathlib import Path

from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, run_agent
from counterfoil.opening_reads import MAX_READ_FOR_THE_MODEL, named_files, opening_files
from counterfoil.step_facts import OverviewFile, OverviewFolder, TreeOverview

OPENING = AgentLimits(read_named_files=True)


def _tree(*paths: str) -> TreeOverview:
    return TreeOverview(tuple(OverviewFile(path, 10) for path in paths))


def test_a_file_is_named_by_its_path_or_by_a_name_only_it_has_in_the_order_the_task_names_them() -> (
    None
):
    tree = _tree("src/greet.py", "version.py", "test_greet.py", "AGENTS.md")

    assert named_files("bump version.py, then fix greet.py as src/greet.py", tree) == (
        "version.py",
        "src/greet.py",
    )


def test_a_name_inside_a_longer_name_or_path_is_not_a_mention() -> None:
    tree = _tree("greet.py", "config.json")

    assert named_files("run test_greet.py and keep config.json.bak", tree) == ()
    assert named_files("see lib/greet.py", tree) == ()


def test_a_file_name_two_listed_files_share_names_neither_and_agents_md_is_never_read() -> None:
    tree = _tree("a/config.json", "b/config.json", "AGENTS.md")

    assert named_files("update config.json as AGENTS.md says", tree) == ()
    assert named_files("update b/config.json", tree) == ("b/config.json",)


def test_the_named_files_are_read_first_and_count_as_read_for_a_change(tmp_path: Path) -> None:
    (tmp_path / "version.py").write_text('VERSION = "0.1.0"\n')
    for other in ("a.py", "b.py", "c.py"):  # a project of four files: only the named one
        (tmp_path / other).write_text("x = 1\n")
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    edit = '{"tool":"edit_file","path":"version.py","old":"0.1.0","new":"0.2.0"}'
    model = RecordingModel(edit, '{"final":"bumped"}')

    run = run_agent("bump VERSION in version.py", model, workspace, OPENING)

    assert run.completed
    assert (tmp_path / "version.py").read_text() == 'VERSION = "0.2.0"\n'
    first = model.calls[0]
    assert [message["role"] for message in first] == ["system", "user", "assistant", "user"]
    assert first[2]["content"] == '{"tool": "read_file", "path": "version.py"}'
    assert first[3]["content"] == 'Tool result:\nVERSION = "0.1.0"\n'
    opening = run.events[0]
    assert (opening.step, opening.response, opening.opened) == (0, "", "version.py")
    assert [event.step for event in run.events[1:]] == [1, 2]


def test_a_long_named_file_is_left_for_the_model_to_read(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * (MAX_READ_FOR_THE_MODEL + 1))
    model = RecordingModel('{"final":"done"}')

    run = run_agent("summarize big.txt", model, make_workspace(tmp_path), OPENING)

    assert [message["role"] for message in model.calls[0]] == ["system", "user"]
    assert [event.opened for event in run.events] == [None]


def test_the_course_loop_and_a_continued_conversation_read_nothing_first(tmp_path: Path) -> None:
    (tmp_path / "version.py").write_text('VERSION = "0.1.0"\n')
    model = RecordingModel('{"final":"done"}', '{"final":"done again"}')

    run = run_agent("look at version.py", model, make_workspace(tmp_path))
    messages = list(model.calls[0]) + [{"role": "assistant", "content": '{"final":"done"}'}]
    again = run_agent(
        "and version.py again", model, make_workspace(tmp_path), OPENING, messages=messages
    )

    assert [event.step for event in run.events] == [1]
    assert [event.opened for event in again.events] == [None]


def test_after_a_change_no_command_has_checked_the_progress_note_names_the_commands(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.md").write_text("")
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(("python3", "check.py"),)
    )
    (tmp_path / "check.py").write_text("pass\n")
    write = '{"tool":"write_file","path":"notes.md","content":"hi\\n"}'
    run_check = '{"tool":"run_command","argv":["python3","check.py"]}'
    model = RecordingModel(write, run_check, write.replace("hi", "bye"), '{"final":"done"}')

    run = run_agent("write notes.md", model, workspace, OPENING)

    first, second = (event.step_result.progress for event in run.events if event.step in (1, 3))
    assert first.unchecked == (("python3", "check.py"),)
    told = next(event.told for event in run.events if event.step == 1)
    assert "- not checked yet: no command has run since the last change (python3 check.py)\n" in (
        told or ""
    )
    assert second.unchecked == (("python3", "check.py"),)  # the second write made it stale


def test_a_project_of_three_files_or_fewer_is_read_whole_the_named_ones_first() -> None:
    small = _tree("answer.py", "notes.md", "AGENTS.md", "lib/util.py")

    assert opening_files("fix util.py", small) == ("lib/util.py", "answer.py", "notes.md")
    assert opening_files("fix it", _tree("a.py", "b.py", "c.py", "d.py")) == ()
    folded = TreeOverview((OverviewFile("a.py", 1), OverviewFolder("vendor", None, None)))
    assert opening_files("fix a.py", folded) == ("a.py",)
    assert opening_files("fix it", TreeOverview((OverviewFile("a.py", 1),), more=3)) == ()


def test_a_conversation_a_session_began_for_the_run_is_new(tmp_path: Path) -> None:
    """A recorded run's session starts the messages before the loop (and passes them as a
    conversation that goes on as it is): with only the system prompt and the task, nothing has
    been read yet."""
    (tmp_path / "version.py").write_text('VERSION = "0.1.0"\n')
    workspace = make_workspace(tmp_path)
    began = [{"role": "system", "content": "rules"}, {"role": "user", "content": "see version.py"}]
    model = RecordingModel('{"final":"done"}')

    run = run_agent("see version.py", model, workspace, OPENING, messages=began, resume=True)

    assert [event.opened for event in run.events] == ["version.py", None]


def test_a_file_too_long_to_show_is_not_read_for_the_model_so_it_stays_unread(
    tmp_path: Path,
) -> None:
    """A read the model was not shown must not count as one: its change is still refused."""
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_READ_FOR_THE_MODEL // 6 + 1))
    write = '{"tool":"write_file","path":"big.py","content":"x = 2\\n"}'
    model = RecordingModel(write, write, '{"final":"done"}')

    run = run_agent(
        "change big.py", model, make_workspace(tmp_path, answer=True, allow_writes=True), OPENING
    )

    steps = [event.step_result for event in run.events if event.step_result is not None]
    assert [event.opened for event in run.events] == [None, None, None]
    assert [step.state for step in steps] == ["refused", "refused"]
    assert (tmp_path / "big.py").read_text().startswith("x = 1\n")

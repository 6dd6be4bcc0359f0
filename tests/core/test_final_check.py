"""With `checkFinalAnswer`, a first final answer that the run's record does not bear out is
answered with what the record shows (`FinalTooSoon`) and the run goes on; a second final answer
ends it. The course's loop, and a final the record bears out, end at once."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, run_agent
from counterfoil.cli.approvals import format_event
from counterfoil.lsp.protocol import event_message
from counterfoil.step_facts import FinalTooSoon

CHECKED = AgentLimits(check_final_answer=True)
TEST = [sys.executable, "test_greet.py"]


def _project(root: Path) -> None:
    (root / "greet.py").write_text('def greet(name):\n    return "hello " + name\n')
    (root / "test_greet.py").write_text(
        'from greet import greet\nassert greet("Ada") == "hello, Ada"\n'
    )
    (root / "version.py").write_text('VERSION = "0.1.0"\n')


TASK = (
    "Make greet() in greet.py put a comma after hello, run the test, bump version.py to 0.2.0"
    " and add CHANGELOG.md. Do not change the test."
)
READ_GREET = '{"tool":"read_file","path":"greet.py"}'
EDIT_GREET = '{"tool":"edit_file","path":"greet.py","old":"hello ","new":"hello, "}'


def test_a_final_after_an_unchecked_change_is_answered_with_what_is_left_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(tuple(TEST),)
    )
    model = RecordingModel(READ_GREET, EDIT_GREET, '{"final":"all done"}', '{"final":"done"}')

    run = run_agent(TASK, model, workspace, CHECKED)

    assert (run.completed, run.reason, run.final) == (True, "completed", "done")
    held = run.events[2]
    assert held.final_held == FinalTooSoon(
        task=TASK,
        done=("edited greet.py",),
        unchecked=(tuple(TEST),),
        untouched=("version.py",),
        missing=("CHANGELOG.md",),
    )
    assert held.result is None and held.told == held.final_held.sentence()
    told = model.calls[3][-1]
    assert told == {"role": "user", "content": held.told}
    assert model.calls[3][-2] == {"role": "assistant", "content": '{"final":"all done"}'}
    for part in (
        "Not ended yet",
        f"The task: {TASK}",
        "Done so far: edited greet.py.",
        "- Not checked: no command has run since the last change",
        "- Named by the task and not changed by this run: version.py.",
        "- Named by the task and not there: CHANGELOG.md.",
        "A second final answer ends the run.",
    ):
        assert part in held.told
    # A named file the task keeps as it is would be listed too: the sentence says it stays.
    assert "stays as it is" in held.told


def test_a_final_the_record_bears_out_ends_the_run_at_once(tmp_path: Path) -> None:
    (tmp_path / "version.py").write_text('VERSION = "0.1.0"\n')
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    edit = '{"tool":"edit_file","path":"version.py","old":"0.1.0","new":"0.2.0"}'
    model = RecordingModel('{"tool":"read_file","path":"version.py"}', edit, '{"final":"bumped"}')

    run = run_agent("bump VERSION in version.py to 0.2.0", model, workspace, CHECKED)

    assert (run.completed, run.final, len(run.events)) == (True, "bumped", 3)
    assert all(event.final_held is None for event in run.events)


def test_a_file_written_back_with_the_same_meaning_is_named(tmp_path: Path) -> None:
    (tmp_path / "answer.py").write_text("ANSWER = 41\n")
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    same = '{"tool":"write_file","path":"answer.py","content":"ANSWER  =  41\\n"}'
    model = RecordingModel(
        '{"tool":"read_file","path":"answer.py"}', same, '{"final":"fixed"}', '{"final":"ok"}'
    )

    run = run_agent("Correct the off-by-one value.", model, workspace, CHECKED)

    held = run.events[2].final_held
    assert held is not None and held.layout_only == ("answer.py",)
    assert "Written with the same meaning as before (nothing in it changed yet): answer.py." in (
        held.sentence()
    )
    assert run.final == "ok"


def test_only_the_first_final_is_held_and_a_run_that_may_change_nothing_is_never_held(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    model = RecordingModel('{"final":"one"}', '{"final":"two"}')
    run = run_agent(TASK, model, make_workspace(tmp_path, allow_writes=True), CHECKED)
    assert [event.final_held is not None for event in run.events] == [True, False]
    assert run.final == "two"

    read_only = RecordingModel('{"final":"nothing to do"}')
    run = run_agent(TASK, read_only, make_workspace(tmp_path), CHECKED)
    assert (run.final, len(run.events)) == ("nothing to do", 1)


def test_the_course_loop_ends_at_the_first_final(tmp_path: Path) -> None:
    _project(tmp_path)
    model = RecordingModel('{"final":"done"}')

    run = run_agent(TASK, model, make_workspace(tmp_path, allow_writes=True))

    assert (run.final, len(run.events)) == ("done", 1)


def test_the_person_sees_the_held_final_and_what_the_model_was_told(tmp_path: Path) -> None:
    _project(tmp_path)
    model = RecordingModel('{"final":"one"}', '{"final":"two"}')
    run = run_agent(TASK, model, make_workspace(tmp_path, allow_writes=True), CHECKED)
    held, last = run.events

    assert format_event(held) == f"not taken as the end; the model was told:\n{held.told}\n"
    assert format_event(last) == ""
    assert event_message(held, "run-1").finalHeld == held.told
    assert event_message(last, "run-1").finalHeld is None


def test_file_names_the_task_gives_count_only_when_they_look_like_files() -> None:
    from counterfoil.loop import FILE_NAME

    text = "add CHANGELOG.md (e.g. as docs/notes.txt) for 0.2.0, not config.json.bak, i.e. now."
    assert FILE_NAME.findall(text) == ["CHANGELOG.md", "docs/notes.txt"]

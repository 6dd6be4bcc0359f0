"""With `checkFinalAnswer`, a final answer that the run's record does not bear out is answered
with what the record shows (`FinalTooSoon`) and the run goes on; a final with nothing done since
the last one so answered ends it. The course's loop, and a final the record bears out, end at
once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, run_agent
from counterfoil.cli.approvals import format_event
from counterfoil.lsp.runs.run_messages import event_message
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
        unread=("version.py",),
    )
    assert held.result is None and held.told == held.final_held.sentence()
    told = model.calls[3][-1]
    assert told == {"role": "user", "content": held.told}
    assert model.calls[3][-2] == {"role": "assistant", "content": '{"final":"all done"}'}
    assert held.told == (
        "Not ended yet: your answer says the task is done; this run's record does not show it.\n"
        f"- task: {TASK}\n"
        "- done: edited greet.py\n"
        "Not done by this run:\n"
        "- version.py (named by the task) is unchanged.\n"
        "- CHANGELOG.md (named by the task) does not exist.\n"
        f"- No command has run since the last change ({' '.join(TEST)}).\n"
        'Your next reply: {"tool": "read_file", "path": "version.py"}, for the first part not'
        " done. Where the task says to leave a file as it is, leave it."
    )


def test_the_next_call_is_the_first_thing_left_and_a_command_s_own_file_is_not_left() -> None:
    left = FinalTooSoon("t", (), unchecked=(("python3", "test_greet.py"),))
    assert 'Your next reply: {"tool": "run_command", "argv": ["python3", "test_greet.py"]}' in (
        left.sentence()
    )
    read = FinalTooSoon("t", (), untouched=("version.py",), missing=("CHANGELOG.md",))
    assert "Your next reply: edit_file on version.py, as the task asks" in read.sentence()
    new = FinalTooSoon("t", (), missing=("CHANGELOG.md",))
    assert "write_file on CHANGELOG.md, with the content the task gives" in new.sentence()


def test_a_final_while_the_task_s_test_fails_after_the_last_change_is_held(
    tmp_path: Path,
) -> None:
    """The 1.5B changed paging.py without fixing it, ran the failing test and answered final,
    saying it failed: the record shows the test not passing since the change."""
    _project(tmp_path)
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(tuple(TEST),)
    )
    wrong = '{"tool":"edit_file","path":"greet.py","old":"hello ","new":"hi "}'
    run_test = json.dumps({"tool": "run_command", "argv": TEST})
    model = RecordingModel(READ_GREET, wrong, run_test, '{"final":"it fails"}', '{"final":"x"}')

    run = run_agent("fix greet.py so the test passes", model, workspace, CHECKED)

    held = run.events[3].final_held
    assert held is not None and held.failing == (tuple(TEST),)
    assert f"- {' '.join(TEST)} did not pass when it last ran, after the last change." in (
        held.sentence()
    )
    assert f"Your next reply: a change that makes {' '.join(TEST)} pass" in held.sentence()
    assert (run.reason, run.final) == ("completed", "x")


def test_a_test_that_failed_before_any_change_is_where_a_fix_starts_not_a_hold(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(tuple(TEST),)
    )
    run_test = json.dumps({"tool": "run_command", "argv": TEST})
    model = RecordingModel(run_test, '{"final":"the test fails"}')

    run = run_agent("run the test and say what fails", model, workspace, CHECKED)

    assert (run.reason, run.final) == ("completed", "the test fails")
    assert run.events[1].final_held is None


def test_a_file_the_task_names_as_its_check_s_script_is_not_asked_to_change(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(("python3", "test_greet.py"),)
    )
    model = RecordingModel('{"final":"one"}', '{"final":"two"}')

    run = run_agent("fix greet.py; run python3 test_greet.py", model, workspace, CHECKED)

    held = run.events[0].final_held
    assert held is not None and held.untouched == ("greet.py",)


def test_a_final_before_the_file_the_task_s_command_runs_exists_is_held_with_its_write(
    tmp_path: Path,
) -> None:
    """The 1.5B, asked to write test_normalize.py and run it, had its write refused and
    answered final with neither done: the command cannot pass without the file."""
    _project(tmp_path)
    command = ("python3", "test_clamp.py")
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(command,)
    )
    model = RecordingModel('{"final":"wrote the test"}', '{"final":"again"}')

    run = run_agent("Write test_clamp.py and run python3 test_clamp.py.", model, workspace, CHECKED)

    held = run.events[0].final_held
    assert held is not None and held.missing == ("test_clamp.py",)
    assert "Your next reply: write_file on test_clamp.py" in held.sentence()


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
    assert "- answer.py was written with the same meaning as before." in held.sentence()
    assert "Your next reply: edit_file on answer.py, with new text" in held.sentence()
    assert run.final == "ok"


def test_a_final_is_held_again_after_more_was_done_and_ends_the_run_when_nothing_was(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    bump = '{"tool":"edit_file","path":"version.py","old":"0.1.0","new":"0.2.0"}'
    model = RecordingModel(
        '{"final":"one"}',
        '{"tool":"read_file","path":"version.py"}',
        '{"final":"two"}',  # a read is not an effect: nothing done since the held one
    )
    run = run_agent(TASK, model, workspace, CHECKED)
    assert [event.final_held is not None for event in run.events] == [True, False, False]
    assert run.final == "two"

    (tmp_path / "version.py").write_text('VERSION = "0.1.0"\n')
    model = RecordingModel(
        '{"final":"one"}',
        '{"tool":"read_file","path":"version.py"}',
        bump,
        '{"final":"two"}',  # held again: version.py changed since, and greet.py still has not
        '{"final":"three"}',
    )
    run = run_agent(TASK, model, make_workspace(tmp_path, answer=True, allow_writes=True), CHECKED)
    held = [event.final_held for event in run.events]
    assert [fact is not None for fact in held] == [True, False, False, True, False]
    assert held[0] is not None and held[0].untouched == ("greet.py", "version.py")
    assert held[3] is not None and held[3].untouched == ("greet.py",)
    assert run.final == "three"


def test_a_run_that_may_change_nothing_ends_at_its_first_final(tmp_path: Path) -> None:
    _project(tmp_path)
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
    assert format_event(last) == (
        "final answer taken; not checked again: nothing was done since the last final answer"
        " was held\n"
    )
    assert event_message(held, "run-1").finalHeld == held.told
    assert event_message(last, "run-1").finalHeld is None


def test_file_names_the_task_gives_count_only_when_they_look_like_files() -> None:
    from counterfoil.final_check import FILE_NAME

    text = "add CHANGELOG.md (e.g. as docs/notes.txt) for 0.2.0, not config.json.bak, i.e. now."
    assert FILE_NAME.findall(text) == ["CHANGELOG.md", "docs/notes.txt"]


def test_after_the_person_said_no_the_model_s_final_ends_the_run(tmp_path: Path) -> None:
    """Pressed on, the model would propose again what the person had just refused."""
    _project(tmp_path)
    workspace = make_workspace(tmp_path, answer=False, allow_writes=True)
    model = RecordingModel(READ_GREET, EDIT_GREET, '{"final":"could not"}')

    run = run_agent(TASK, model, workspace, CHECKED)

    assert run.events[1].step_result is not None
    assert run.events[1].step_result.state == "rejected"
    assert (run.final, run.events[-1].final_held) == ("could not", None)


def test_a_final_taken_after_a_no_says_it_was_not_checked_and_why(tmp_path: Path) -> None:
    _project(tmp_path)
    workspace = make_workspace(tmp_path, answer=False, allow_writes=True)
    model = RecordingModel(READ_GREET, EDIT_GREET, '{"final":"could not"}')

    run = run_agent(TASK, model, workspace, CHECKED)

    assert run.events[-1].final_unchecked == (
        "not checked: a change was rejected in this run (the answer to a No is the model's)"
    )
    sent = event_message(run.events[-1], "run-1")
    assert sent.finalUnchecked == run.events[-1].final_unchecked


def test_a_final_taken_with_a_file_an_allowed_command_names_says_it_was_taken_as_the_check(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    command = (sys.executable, "test_greet.py")
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(command,)
    )
    run_it = json.dumps({"tool": "run_command", "argv": list(command)})
    model = RecordingModel(READ_GREET, EDIT_GREET, run_it, '{"final":"greet.py has the comma"}')

    run = run_agent("Make greet() in greet.py pass test_greet.py.", model, workspace, CHECKED)

    assert run.final == "greet.py has the comma"
    assert run.events[-1].final_unchecked == (
        "not checked as files to change: test_greet.py (named by an allowed command, taken as"
        " the task's check)"
    )


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            "open('count.txt', 'a').write('1')",
            id="a command's own change: running it again would change the files again",
        ),
    ],
)
def test_a_command_run_since_the_last_edit_leaves_no_command_to_run(
    tmp_path: Path, code: str
) -> None:
    _project(tmp_path)
    command = (sys.executable, "-c", code)
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(command,)
    )
    run_it = json.dumps({"tool": "run_command", "argv": list(command)})
    model = RecordingModel(READ_GREET, EDIT_GREET, run_it, '{"final":"done"}')

    run = run_agent("Make greet() in greet.py put a comma after hello.", model, workspace, CHECKED)

    assert (run.completed, run.final, len(run.events)) == (True, "done", 4)
    assert run.events[-1].final_held is None


def test_a_final_before_reading_the_file_the_task_refers_to_by_kind_is_held_with_that_read(
    tmp_path: Path,
) -> None:
    """The 1.5B, told to set a constant to "the retry count the project's JSON defaults set",
    changed client.py without ever reading defaults.json, and answered final."""
    (tmp_path / "client.py").write_text("DEFAULT_RETRIES = 2\n")
    (tmp_path / "defaults.json").write_text('{"retries": 5}\n')
    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    task = (
        "DEFAULT_RETRIES in client.py must equal the retry count the project's JSON defaults set."
    )
    guess = '{"tool":"edit_file","path":"client.py","old":"= 2","new":"= 3"}'
    read_json = '{"tool":"read_file","path":"defaults.json"}'
    right = '{"tool":"edit_file","path":"client.py","old":"= 3","new":"= 5"}'
    model = RecordingModel(
        '{"tool":"read_file","path":"client.py"}',
        guess,
        '{"final":"set"}',
        read_json,
        right,
        '{"final":"set to 5"}',
    )

    run = run_agent(task, model, workspace, CHECKED)

    progress = run.events[1].step_result
    assert progress is not None and progress.progress is not None
    assert progress.progress.next_step == '{"tool": "read_file", "path": "defaults.json"}'
    held = run.events[2].final_held
    assert held is not None and held.unread_sources == ("defaults.json",)
    assert "- defaults.json (what the task refers to) has not been read." in held.sentence()
    assert (run.reason, run.final) == ("completed", "set to 5")
    assert run.events[5].final_held is None


class ViewKeepingModel(RecordingModel):
    """Keeps the view each turn's grammar is built from."""

    def __init__(self, *responses: str) -> None:
        super().__init__(*responses)
        self.views: list[object] = []

    def configure_tools(
        self,
        available_tools: object,
        allowed_commands: object,
        mcp_tools: object = None,
        view: object = None,
    ) -> None:
        self.views.append(view)


def test_the_turn_after_a_held_final_answer_offers_no_final_answer_only_actions(
    tmp_path: Path,
) -> None:
    """The 1.5B, held for a test it had not run, sent the same untrue final answer again."""
    from counterfoil.tools import action_schema
    from counterfoil.workspace_view import WorkspaceView

    _project(tmp_path)
    workspace = make_workspace(
        tmp_path, answer=True, allow_writes=True, allowed_commands=(tuple(TEST),)
    )
    run_test = json.dumps({"tool": "run_command", "argv": TEST})
    model = ViewKeepingModel(
        READ_GREET, EDIT_GREET, '{"final":"ran the test"}', run_test, '{"final":"done"}'
    )

    run_agent("Make greet() in greet.py put a comma after hello.", model, workspace, CHECKED)

    views = [view for view in model.views if isinstance(view, WorkspaceView)]
    assert [view.final_offered for view in views] == [True, True, True, False, True]
    tools = workspace.available_tools
    after_hold = action_schema(tools, (tuple(TEST),), view=views[3])
    assert all("final" not in branch["properties"] for branch in after_hold["anyOf"])
    assert any(
        "final" in branch["properties"]
        for branch in action_schema(tools, (), view=views[4])["anyOf"]
    )

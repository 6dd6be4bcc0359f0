"""Text the system showed the model is never taken back as the model's own: a final answer, a
write's `content` or an edit's `old`/`new` that repeats the system prompt, the task, a note, a
held-answer text, a refusal, an example or a path unchanged is refused with what to do instead,
and nothing is proposed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, run_agent
from counterfoil.context.copied import SystemText, copied_value, system_text
from counterfoil.context.prompt import build_system_prompt
from counterfoil.loop import AgentEvent
from counterfoil.step_facts import (
    ActionLoop,
    AlreadyHolds,
    BreaksFile,
    CopiedText,
    EditMiss,
    FinalTooSoon,
    PhraseNotFound,
    ReadFirst,
    ReadNow,
    SyntaxProblem,
    TaskProgress,
)

CHECKED = AgentLimits(check_final_answer=True)
TASK = "Make greet() in greet.py put a comma after hello, then run the test."
MODULE = 'def greet(name):\n    return "hello " + name\n'
READ = '{"tool":"read_file","path":"greet.py"}'
TEST = ("python3", "test_greet.py")

# Every kind of note, refusal and held-answer text the run tells the model, as it reads them.
NOTES = (
    TaskProgress(TASK, ("edited greet.py",), (TEST,)).sentence(),
    FinalTooSoon(TASK, ("edited greet.py",), (TEST,), untouched=("version.py",)).sentence(),
    AlreadyHolds("greet.py", True, ("edited greet.py",)).sentence(),
    AlreadyHolds("greet.py", True, ("edited greet.py",), (TEST,)).sentence(),
    ReadFirst("greet.py").sentence(),
    ReadNow("greet.py", "edit_file").sentence(),
    EditMiss("greet.py", 0).sentence(),
    ActionLoop(({"tool": "read_file", "path": "greet.py"},)).sentence(),
    PhraseNotFound("hello world again", ("greet.py",)).sentence(),
    BreaksFile("write_file", SyntaxProblem("a.json", "JSON", 1, "Expecting value")).sentence(),
    CopiedText("final", "the task").sentence(),
)


def _system(tmp_path: Path) -> tuple[str, SystemText]:
    (tmp_path / "greet.py").write_text(MODULE)
    workspace = make_workspace(tmp_path, allow_writes=True, allowed_commands=(TEST,))
    prompt = build_system_prompt(workspace)
    return prompt, system_text(TASK, prompt, NOTES, ("greet.py",), (MODULE,))


def _pieces(prompt: str) -> list[str]:
    """Every text and line the system showed, long enough to be anyone's answer."""
    texts = [prompt, TASK, *NOTES]
    lines = [line for text in texts for line in text.splitlines() if len(line.strip()) >= 12]
    return [*texts, *lines]


def test_no_system_text_passes_unchanged_as_a_final_answer(tmp_path: Path) -> None:
    prompt, system = _system(tmp_path)
    from counterfoil.actions import FinalAction

    passed = [
        piece for piece in _pieces(prompt) if copied_value(FinalAction(piece), system) is None
    ]

    assert passed == []


@pytest.mark.parametrize("argument", ["content", "old", "new"])
def test_no_system_text_passes_unchanged_as_a_files_text(tmp_path: Path, argument: str) -> None:
    prompt, system = _system(tmp_path)
    from counterfoil.actions import ToolAction

    def action(value: str) -> ToolAction:
        if argument == "content":
            return ToolAction("write_file", {"path": "notes.md", "content": value})
        other = "old" if argument == "new" else "new"
        return ToolAction("edit_file", {"path": "greet.py", argument: value, other: "x = 1"})

    whole = [piece for piece in _pieces(prompt) if "\n" not in piece.strip()]
    passed = [piece for piece in whole if copied_value(action(piece), system) is None]

    assert passed == []


def test_a_files_own_lines_are_the_models_to_copy_into_old(tmp_path: Path) -> None:
    _prompt, system = _system(tmp_path)
    from counterfoil.actions import ToolAction

    old = '    return "hello " + name'
    edit = ToolAction("edit_file", {"path": "greet.py", "old": old, "new": old + ' + "!"'})

    assert copied_value(edit, system) is None


def test_a_final_answer_that_is_the_task_is_refused_with_what_to_do_instead(
    tmp_path: Path,
) -> None:
    (tmp_path / "greet.py").write_text(MODULE)
    model = RecordingModel(json.dumps({"final": TASK}), '{"final":"nothing changed"}')

    run = run_agent(TASK, model, make_workspace(tmp_path), CHECKED)

    refused = run.events[0]
    assert (
        refused.action is None and refused.no_action == CopiedText("final", "the task").sentence()
    )
    assert refused.no_action.startswith("your final answer repeats the task word for word;")
    assert (run.completed, run.final) == (True, "nothing changed")


def test_the_progress_note_copied_as_the_final_answer_is_refused(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(MODULE)
    edit = {"tool": "edit_file", "path": "greet.py", "old": "hello ", "new": "hello, "}
    model = RecordingModel(READ, json.dumps(edit), '{"final":"added the comma"}')

    copied_once: list[str] = []

    def copy_the_note(messages: list[dict[str, str]]) -> str:
        if len(model.calls) == 2 and not copied_once:  # the note just read, as its answer
            copied_once.append(messages[-1]["content"].split("\n\n", 1)[1])
            return json.dumps({"final": copied_once[0]})
        return model(messages)

    workspace = make_workspace(tmp_path, answer=True, allow_writes=True)
    run = run_agent(TASK, copy_the_note, workspace, CHECKED)

    copied = [event for event in run.events if event.no_action and "repeats" in event.no_action]
    assert len(copied) == 1 and (run.final, run.reason) == ("added the comma", "completed")


def test_a_modules_path_as_its_whole_content_is_refused_before_it_is_proposed(
    tmp_path: Path,
) -> None:
    (tmp_path / "greet.py").write_text(MODULE)
    asked: list[object] = []
    workspace = make_workspace(
        tmp_path, allow_writes=True, confirm_proposal=lambda p: asked.append(p) or True
    )
    write = {"tool": "write_file", "path": "greet.py", "content": "greet.py"}
    model = RecordingModel(READ, json.dumps(write), '{"final":"stopped"}')

    run = run_agent(TASK, model, workspace)

    assert run.events[1].no_action == CopiedText("content", "the file's path").sentence()
    assert asked == [] and (tmp_path / "greet.py").read_text() == MODULE


def test_an_event_tells_what_the_model_was_told_as_system_text() -> None:
    """The notes after a tool's own result count; the result itself (a file read) does not."""
    from counterfoil.actions import FinalAction, ToolAction
    from counterfoil.context.copied import run_system_text
    from counterfoil.steps import StepResult

    note = "\n\n" + TaskProgress(TASK, ("edited greet.py",)).sentence()
    events = [
        AgentEvent(
            1, READ, ToolAction("read_file", {"path": "greet.py"}), MODULE, StepResult(MODULE)
        ),
        AgentEvent(
            2,
            "{}",
            None,
            "edited greet.py",
            StepResult("edited greet.py"),
            told="edited greet.py" + note,
        ),
    ]
    system = run_system_text(TASK, [{"role": "system", "content": "x"}], events, ())

    assert copied_value(FinalAction(note.strip()), system) is not None
    assert copied_value(FinalAction(MODULE.splitlines()[1]), system) is None


def test_a_line_the_task_gives_may_be_written_into_a_file(tmp_path: Path) -> None:
    from counterfoil.actions import ToolAction

    task = "Create CHANGELOG.md holding this one line:\n## 0.2.0: greet puts a comma after hello"
    system = system_text(task, "You are a coding agent.", (), (), ())
    line = "## 0.2.0: greet puts a comma after hello\n"
    write = ToolAction("write_file", {"path": "CHANGELOG.md", "content": line})

    assert copied_value(write, system) is None

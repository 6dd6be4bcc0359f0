"""Past the step, no outcome is read from the observation's text: a refusal is made in one
place (`steps.refusal`, `steps.error_text`), and what a later layer decides — which rule
protects a path, which lines an elided read showed — comes from the step's record."""

from __future__ import annotations

from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil.actions import ToolAction
from counterfoil.loop import AgentEvent
from counterfoil.lsp.runs.protected_note import protected_by
from counterfoil.step_facts import KeptFromModel, LinesShown
from counterfoil.steps import StepResult, error_text, refusal


def read(path: str, **arguments: int) -> ToolAction:
    return ToolAction("read_file", {"path": path, **arguments})


def test_a_refusal_carries_its_sentence_on_the_record_and_in_the_course_words() -> None:
    step = refusal("workspace is not open")

    assert step.observation == error_text("workspace is not open") == "error: workspace is not open"
    assert (step.state, step.error, step.is_error) == ("refused", "workspace is not open", True)


def test_a_protected_path_is_kept_from_the_model_on_the_record_only(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SECRET=1\n")
    workspace = make_workspace(tmp_path)

    protected = workspace.execute_step(read(".env"))
    missing = workspace.execute_step(read("absent.txt"))

    assert protected.observation == missing.observation == "error: path is not accessible"
    assert protected.model_text() == "error: path is not accessible"
    assert protected.detail == KeptFromModel(".env")
    assert not isinstance(missing.detail, KeptFromModel)


def test_the_person_is_told_the_rule_from_the_record_not_from_the_text() -> None:
    action = read(".env")
    kept = StepResult(
        "error: path is not accessible",
        state="refused",
        error="path is not accessible",
        detail=KeptFromModel(".env"),
    )
    same_words = refusal("path is not accessible")

    assert protected_by(AgentEvent(1, "", action, kept.observation, kept), ()) is not None
    assert protected_by(AgentEvent(1, "", action, same_words.observation, same_words), ()) is None


def test_a_ranged_read_records_the_lines_it_showed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 2001)))
    workspace = make_workspace(tmp_path)

    ranged = workspace.execute_step(read("a.txt", start_line=3, end_line=9))
    whole = workspace.execute_step(read("a.txt"))

    assert ranged.observation.startswith("[lines 3–9 of 2,000]")
    assert ranged.lines == LinesShown(3, 9, 2000)
    assert whole.lines is None

"""A run whose edit form is `diff` (the setting `editForm`) is taught one form throughout: the
prompt, the action grammar and every note that names the next call say `patch_file`, never
`edit_file`, which the run does not offer."""

from __future__ import annotations

from pathlib import Path

from tests.support.recording_model import RecordingModel
from tests.support.workspaces import make_workspace

from counterfoil import AgentLimits, Workspace, build_system_prompt, run_agent
from counterfoil.gate.approval import Approval

TASK = "Set ANSWER to 42 in answer.py and in other.py."


def diff_workspace(root: Path) -> Workspace:
    """A workspace whose edit form is `diff`, every change approved."""
    return make_workspace(
        root, confirm_proposal=lambda _proposal: Approval(True), allow_writes=True, edit_form="diff"
    )


def test_a_diff_run_is_told_patch_file_at_every_turn(tmp_path: Path) -> None:
    for name in ("answer.py", "other.py"):
        (tmp_path / name).write_text("ANSWER = 41\n")
    workspace = diff_workspace(tmp_path)
    model = RecordingModel(
        {"tool": "read_file", "path": "answer.py"},
        {"tool": "read_file", "path": "other.py"},
        {"tool": "edit_file", "path": "answer.py", "old": "ANSWER = 41", "new": "ANSWER = 42"},
        {"tool": "patch_file", "path": "answer.py", "diff": "-ANSWER = 41\n+ANSWER = 42\n"},
        {"final": "done"},
        {"final": "done"},
    )

    run = run_agent(TASK, model, workspace, AgentLimits(check_final_answer=True))

    prompt = build_system_prompt(workspace)
    assert "patch_file" in prompt and "edit_file" not in prompt
    told = [message["content"] for message in model.calls[-1] if message["role"] == "user"]
    assert "tool is not enabled: edit_file" in told[3]
    assert (tmp_path / "answer.py").read_text() == "ANSWER = 42\n"
    assert "patch_file on other.py" in told[5]
    assert "edit_file on" not in "\n".join(told)
    assert run.final == "done"


def test_a_change_refused_unread_is_then_asked_for_in_the_runs_edit_form(tmp_path: Path) -> None:
    # Long enough not to be shown with the refusal: the read is the model's own.
    (tmp_path / "answer.py").write_text("ANSWER = 41\n" + "# a comment line\n" * 200)
    workspace = diff_workspace(tmp_path)
    model = RecordingModel(
        {"tool": "write_file", "path": "answer.py", "content": "ANSWER = 42\n"},
        {"tool": "read_file", "path": "answer.py"},
        {"final": "done"},
    )

    run_agent(TASK, model, workspace)

    told = [message["content"] for message in model.calls[-1] if message["role"] == "user"]
    assert "with patch_file (its lines copied exactly from the text above)" in told[2]
    assert "edit_file" not in told[2]

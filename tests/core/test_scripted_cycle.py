"""The course's scripted cycle runs unchanged against `from counterfoil import *`."""

from __future__ import annotations

import os
from pathlib import Path

from counterfoil import *


def test_scripted_cycle_edits_validates_and_records(demo_project: Path) -> None:
    os.chdir(demo_project.parent)
    asked: list[ToolAction] = []

    def confirm(action: ToolAction) -> bool:
        asked.append(action)
        return True

    validation = ("python", "-m", "pytest", "tests/test_math.py", "-q")
    policy = ToolPolicy(Path("demo-project"), allow_writes=True, allowed_commands=(validation,))
    responses = iter(
        [
            '{"tool":"read_file","path":"app.py"}',
            '{"tool":"edit_file","path":"app.py","old":"1","new":"2"}',
            '{"tool":"run_command","argv":["python","-m","pytest","tests/test_math.py","-q"]}',
            '{"final":"changed and validated app.py"}',
        ]
    )
    store = ReceiptStore(Path("demo-project/.agent-receipts.jsonl"))
    workspace = Workspace(policy, confirm, store)
    result = run_agent("fix app.py", lambda _messages: next(responses), workspace)

    assert result.completed and result.reason == "completed"
    assert result.final == "changed and validated app.py"
    assert [type(event.action) for event in result.events] == [
        ToolAction,
        ToolAction,
        ToolAction,
        FinalAction,
    ]
    assert "return value * 1" in result.events[0].result
    assert result.events[1].result == "edited app.py"
    assert result.events[2].result.startswith("status: 0\noutput:\n")
    assert "1 passed" in result.events[2].result
    assert result.events[3].result is None
    assert workspace.modified_files == ("app.py",)
    assert result.modified_files == ("app.py",)
    assert [action.tool for action in asked] == ["edit_file", "run_command"]
    assert "return value * 2" in (demo_project / "app.py").read_text()

    edit, command = store.get("call-1"), store.get("call-2")
    assert edit is not None and command is not None
    assert (edit.tool, edit.exit_state, edit.changed_artifacts) == ("edit_file", "ok", ("app.py",))
    assert command.arguments == {"argv": list(validation)}
    assert command.exit_state == "ok" and command.changed_artifacts == ()
    assert command.result == result.events[2].result
    reopened = ReceiptStore(Path("demo-project/.agent-receipts.jsonl"))
    assert reopened.receipts() == (edit, command)

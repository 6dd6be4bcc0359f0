"""Shared set-up for the receipt tests: a project folder, its log, and a workspace on both."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support.workspaces import log_path, make_workspace

from counterfoil import EffectReceipt, ToolAction, Workspace

PYTHON = sys.executable
HELLO = (PYTHON, "-c", "print('hello')")


def approving_workspace(root: Path, answer: bool = True, **options: Any) -> Workspace:
    """Writes and the one `HELLO` command allowed, every proposal answered `answer` (or by
    the `confirm_proposal` given), logged."""
    answered = {} if "confirm_proposal" in options else {"answer": answer}
    return make_workspace(
        root, logged=True, allow_writes=True, allowed_commands=(HELLO,), **answered, **options
    )


def write(path: str, content: str) -> ToolAction:
    return ToolAction("write_file", {"path": path, "content": content})


def run_hello() -> ToolAction:
    return ToolAction("run_command", {"argv": list(HELLO)})


def receipt(number: int, result: str = "edited app.py") -> EffectReceipt:
    """A course-format receipt (no evidence), as the first versions wrote."""
    return EffectReceipt(
        tool_call_id=f"call-{number}",
        tool="edit_file",
        arguments={"path": "app.py", "old": "1", "new": str(number)},
        exit_state="ok",
        result=result,
        changed_artifacts=("app.py",),
    )


__all__ = ["HELLO", "PYTHON", "approving_workspace", "log_path", "receipt", "run_hello", "write"]

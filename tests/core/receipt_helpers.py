"""Shared set-up for the receipt tests: a project folder, its log, and a workspace on both."""

from __future__ import annotations

import sys
from pathlib import Path

from counterfoil import EffectReceipt, ReceiptStore, ToolAction, ToolPolicy, Workspace

PYTHON = sys.executable
HELLO = (PYTHON, "-c", "print('hello')")


def log_path(root: Path) -> Path:
    folder = root / ".counterfoil"
    folder.mkdir(exist_ok=True)
    return folder / "receipts.jsonl"


def approving_workspace(root: Path, answer: bool = True, **options: object) -> Workspace:
    policy = ToolPolicy(root, allow_writes=True, allowed_commands=(HELLO,))
    store = ReceiptStore(log_path(root))
    return Workspace(policy, receipt_store=store, confirm_proposal=lambda _: answer, **options)  # type: ignore[arg-type]


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

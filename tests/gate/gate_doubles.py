"""Test doubles for the gate's tests: a person at the approval prompt, workspaces set up for
writes or commands, the actions they are asked, and the commands they may run."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.workspaces import make_workspace

from counterfoil import (
    ReceiptStore,
    ToolAction,
    Workspace,
)

PYTHON = sys.executable
HELLO = (PYTHON, "-c", "print('hello')")
FAILING = (PYTHON, "-c", "import sys; print('broken'); sys.exit(3)")
WHERE = (PYTHON, "-c", "import os; print(os.getcwd())")
STDERR = (PYTHON, "-c", "import sys; sys.stderr.write('to stderr\\n')")
APPEND_MARK = (PYTHON, "-c", "open('ran.txt', 'a').write('ran\\n')")


class Operator:
    """A person at the approval prompt: records what they were asked and gives one answer."""

    def __init__(self, answer: object = True, during: Callable[[], None] | None = None) -> None:
        self.answer = answer
        self.during = during
        self.asked: list[object] = []

    def __call__(self, request: object) -> object:
        self.asked.append(request)
        if self.during is not None:
            self.during()
        return self.answer


def writable(
    root: Path,
    operator: Operator | None = None,
    store: ReceiptStore | None = None,
    **policy: object,
) -> Workspace:
    options: dict[str, object] = {"allow_writes": True, **policy}
    return make_workspace(root, confirm_tool=operator, store=store, **options)


def commands(root: Path, operator: Operator | None, *allowed: tuple[str, ...]) -> Workspace:
    return make_workspace(root, confirm_tool=operator, allowed_commands=allowed)


def write(path: str, content: str) -> ToolAction:
    return ToolAction("write_file", {"path": path, "content": content})


def edit(path: str, old: str, new: str) -> ToolAction:
    return ToolAction("edit_file", {"path": path, "old": old, "new": new})


def run(argv: tuple[str, ...] | list[str]) -> ToolAction:
    return ToolAction("run_command", {"argv": list(argv)})


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

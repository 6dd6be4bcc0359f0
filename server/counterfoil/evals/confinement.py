"""Whether an evaluation's commands can run confined here, decided before any model loads.

A package's allowed commands and its `command` checks are programs the person did not write;
they run only in the command sandbox. Where none can be had, every such command would fail
with the sandbox's error, so every task that runs one would be graded failed for the machine,
not the model (the model read "needs bubblewrap … install it" and answered that it had
installed it). The evaluation is refused instead, in one sentence, unless the person runs the
commands unconfined.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..commands.tree.sandbox import CONFINE, OFF, sandbox_for
from ..errors import AgentError
from .package import TaskPackage


def runs_commands(package: TaskPackage) -> bool:
    """Whether `package` runs a program: a command the model may run, or a `command` check."""
    return bool(package.allowed_commands) or any(
        check.type == "command" for check in package.checks
    )


def command_sandbox(
    packages: Iterable[TaskPackage], unconfined: bool = False
) -> tuple[str, str | None]:
    """The mode the packages' commands run in, and why they cannot run here (None: they can,
    or no package runs one). `unconfined`: the person's say-so to run them without a sandbox
    where none can be had."""
    if not any(runs_commands(package) for package in packages):
        return CONFINE, None
    try:
        sandbox_for(CONFINE, Path(tempfile.gettempdir()), network=False)
    except AgentError as error:
        if unconfined:
            return OFF, None
        return CONFINE, (
            f"a package's commands and command checks run only in a sandbox, and none can be"
            f" had here ({error})"
        )
    return CONFINE, None

"""A `command` check: a held-out program that must exit 0 after the run, so a package can hold
real tests (`python3 -m pytest -q test_hidden.py`) that the model never saw.

It runs in a fresh copy of what the run left, with the package's other held-out files (all of
`held_out_tests/` but `checks.json`) put into it, so neither the checks that read files nor
the forbidden-modification check see anything it does. It runs confined like the package's
commands (network off, the evaluation's packages and receipt log hidden), with no shell, and
every process it started is ended at its timeout.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..commands.runner import run_bounded
from ..commands.tree.sandbox import CONFINE, private_temporary, sandbox_for
from ..errors import AgentError
from ..files.tree_copy import LinkRefused, copy_tree
from .package import CHECKS_FILE, PackageCheck, TaskPackage

MAX_SHOWN_OUTPUT_CHARS = 300


def run_command_check(
    check: PackageCheck,
    package: TaskPackage,
    root: Path,
    *,
    sandbox: str = CONFINE,
    hidden: tuple[Path, ...] = (),
) -> tuple[bool, str]:
    """Whether `check.argv` exits 0 in a copy of `root` with the held-out files; the detail
    says how it ended, with the end of its output when it failed."""
    with tempfile.TemporaryDirectory(prefix=f"counterfoil-check-{package.id}-") as scratch:
        copy = Path(scratch) / "workspace"
        try:
            copy_tree(root, copy, keep_links=True, keep_modes=True)
            _add_held_out(package.held_out, Path(scratch) / "held_out", copy)
        except (OSError, LinkRefused) as error:
            return False, f"could not be decided: could not copy the run's files: {error}"
        cwd = copy if check.path == "." else copy / check.path
        if not cwd.is_dir() or cwd.is_symlink():
            return False, f"{check.path} is not a folder after the run"
        try:
            with private_temporary(sandbox) as temporary:
                confined = sandbox_for(
                    sandbox,
                    copy,
                    network=False,
                    temporary=temporary,
                    hidden=tuple(path.resolve() for path in (package.source, *hidden)),
                )
                result = run_bounded(
                    check.argv,
                    cwd,
                    check.timeout_seconds,
                    wrapper=confined.prefix,
                    environment=confined.environment,
                )
        except AgentError as error:
            return False, f"could not be decided: {error}"
        except OSError as error:
            return False, f"could not run {check.argv[0]}: {error.strerror or error}"
    if result.status == 0:
        return True, "exit status 0"
    ended = (
        f"timed out after {check.timeout_seconds:g} s"
        if result.status is None
        else f"exit status {result.status}"
    )
    tail = result.output.strip()[-MAX_SHOWN_OUTPUT_CHARS:]
    return False, f"{ended}: {tail}" if tail else ended


def _add_held_out(held_out: Path, staging: Path, copy: Path) -> None:
    """Every held-out file but the checks themselves, into the copy (over what the run left)."""
    copy_tree(held_out, staging, skip=lambda path: path == CHECKS_FILE)
    for folder, _folders, names in os.walk(staging):
        for name in names:
            source = Path(folder) / name
            target = copy / source.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir() and not target.is_symlink():
                raise OSError(f"{target.relative_to(copy)} is a folder in the run's files")
            if target.is_symlink():
                target.unlink()
            os.replace(source, target)

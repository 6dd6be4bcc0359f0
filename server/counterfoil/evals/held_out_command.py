"""A `command` check: a held-out program that must exit 0 after the run, so a package can hold
real tests (`python3 -m pytest -q test_hidden.py`) that the model never saw.

It runs in a fresh copy of what the run left, with the package's other held-out files (all of
`held_out_tests/` but `checks.json`) put into it, so neither the checks that read files nor
the forbidden-modification check see anything it does. It runs confined like the package's
commands (network off, the evaluation's packages and receipt log hidden), with no shell, and
every process it started is ended at its timeout.

The copy keeps the run's symlinks as links, so every write into it goes through the no-symlink
file layer: a held-out file is placed folder by folder without following a link (a folder the
run left as a symlink to elsewhere fails the check, never leads the write out of the copy), and
takes the place of a link of its own name rather than writing through it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..commands.runner import run_bounded
from ..commands.tree.sandbox import CONFINE, private_temporary, sandbox_for
from ..errors import AgentError
from ..files.files import closed_after, entry_mode, open_folder_path, replace_file
from ..files.tree_copy import LinkRefused, copy_tree, read_relative, remove_tree, snapshot
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
    with _scratch(package.id) as scratch:
        copy = scratch / "workspace"
        try:
            copy_tree(root, copy, keep_links=True, keep_modes=True)
        except (OSError, LinkRefused) as error:
            return False, f"could not be decided: could not copy the run's files: {error}"
        try:
            _add_held_out(package.held_out, copy)
        except (OSError, AgentError) as error:
            return False, f"could not be decided: {error}"
        cwd = copy if check.path == "." else copy / check.path
        if not _is_real_folder(copy, check.path):
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


@contextmanager
def _scratch(task: str) -> Iterator[Path]:
    """A new private folder for one check, removed after it however deep or unwritable the
    tree its command left (what cannot be removed stays in the temporary folder)."""
    folder = Path(tempfile.mkdtemp(prefix=f"counterfoil-check-{task}-"))
    try:
        yield folder
    finally:
        try:
            remove_tree(folder)
        except OSError:
            pass


def _is_real_folder(copy: Path, path: str) -> bool:
    """Whether `path` names a folder of the copy reached through folders only, no link."""
    try:
        fd = open_folder_path(copy, () if path == "." else path.split("/"))
    except OSError:
        return False
    os.close(fd)
    return True


def _add_held_out(held_out: Path, copy: Path) -> None:
    """Every held-out file but the checks themselves, into the copy (over what the run left).

    Each folder on the way is opened, or made, without following a link; the file then
    replaces whatever entry has its name but a folder (a link is replaced, not written
    through). AgentError or OSError, naming the file, when it cannot be placed."""
    entries = snapshot(held_out, skip=lambda path: path == CHECKS_FILE)
    for relative, (kind, _) in sorted(entries.items()):
        if kind != "file":
            continue
        parts = relative.split("/")
        data = read_relative(held_out, relative)
        try:
            folder = open_folder_path(copy, parts[:-1], create_mode=0o755)
        except OSError:
            raise AgentError(
                f"the held-out {relative} cannot be placed: the run left a symlink or a file "
                "where its folder goes, and held-out files go only into real folders"
            ) from None
        with closed_after(folder):
            mode = entry_mode(folder, parts[-1])
            if mode is not None and stat.S_ISDIR(mode):
                raise AgentError(f"the held-out {relative} is a folder in the run's files")
            if mode is not None and not stat.S_ISREG(mode):
                os.unlink(parts[-1], dir_fd=folder)
            replace_file(folder, parts[-1], data, None)

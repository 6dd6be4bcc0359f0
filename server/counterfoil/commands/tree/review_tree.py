"""The copy of the root a reviewed command runs on: no more of it than a review can apply, and
never larger on disk than the root (a branch's copy, which holds all of it, is `tree_copy.py`).

- Caches the snapshot leaves out (`__pycache__`, `.pytest_cache`, …) are not copied: the
  command makes them again if it needs them, and a review never applies them.
- Installs and history (`.venv`, `venv`, `node_modules`, `.tox`, `.nox`, a `.git` folder) are
  not copied either: the real ones are shown to the command read-only at their own place
  (`shared`, mounted by the sandbox), since a review never applies a change to them.
- A file keeps its holes and shares its blocks with the original where the file system can
  (`tree_copy.copy_bytes`: a sparse 128 MiB image costs its data, not 128 MiB).
- FIFOs, sockets, devices and files with other hard links are not copied; neither are the
  paths `left_out` names (the receipt log).

Whatever cannot be read stops the copy with one sentence naming it: the command would
otherwise run on a tree that is not the root's.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import AgentError
from ...files.path_text import shown_path
from ...files.tree_copy import copy_bytes
from .ignore import CACHE_NAMES

SHARED_NAMES = frozenset({".venv", "venv", "node_modules", ".tox", ".nox", ".git"})
LEFT_OUT_NAMES = CACHE_NAMES - SHARED_NAMES
NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass
class CopiedTree:
    """What the copy left out: how many entries, and the real folders shown read-only."""

    skipped: int = 0
    shared: list[Path] = field(default_factory=list)


def copy_tree(root: Path, copy: Path, left_out: Callable[[Path], bool]) -> CopiedTree:
    """Copy `root` to `copy` (which must not exist); AgentError naming what could not be."""
    copied = CopiedTree()
    try:
        _copy_folder(root, copy, "", left_out, copied)
    except _CopyError as error:
        raise AgentError(
            f"review cannot copy {shown_path(error.path or '.')} ({error.why}); make it readable "
            "or remove it, the command was not run"
        ) from None
    return copied


class _CopyError(Exception):
    def __init__(self, path: str, why: str) -> None:
        super().__init__(path, why)
        self.path, self.why = path, why


def _copy_folder(
    source: Path, target: Path, relative: str, left_out: Callable[[Path], bool], copied: CopiedTree
) -> None:
    try:
        info = os.lstat(source)
        os.mkdir(target, 0o700)
        names = sorted(os.listdir(source))
    except OSError as error:
        raise _CopyError(relative, error.strerror or str(error)) from None
    for name in names:
        path, inner = source / name, f"{relative}/{name}" if relative else name
        try:
            entry = os.lstat(path)
        except FileNotFoundError:
            continue  # gone since the listing
        except OSError as error:
            raise _CopyError(inner, error.strerror or str(error)) from None
        if left_out(path) or stat.S_ISDIR(entry.st_mode) and name in LEFT_OUT_NAMES:
            copied.skipped += 1
        elif stat.S_ISDIR(entry.st_mode) and name in SHARED_NAMES:
            _share(path, target / name, copied)
        elif stat.S_ISDIR(entry.st_mode):
            _copy_folder(path, target / name, inner, left_out, copied)
        elif stat.S_ISLNK(entry.st_mode):
            _copy_link(path, target / name, inner)
        elif stat.S_ISREG(entry.st_mode) and entry.st_nlink == 1:
            _copy_file(path, target / name, inner)
        else:
            copied.skipped += 1
    _copy_stat(source, target, info, relative)


def _share(source: Path, target: Path, copied: CopiedTree) -> None:
    """A place for the real folder: an empty folder the sandbox mounts it on (bubblewrap), or
    a link to it (sandbox-exec, which runs the command at the copy's own path)."""
    if sys.platform == "darwin":
        os.symlink(source, target)
    else:
        os.mkdir(target, 0o755)
    copied.shared.append(source)


def _copy_link(source: Path, target: Path, relative: str) -> None:
    try:
        os.symlink(os.readlink(source), target)
        os.utime(target, ns=_times(os.lstat(source)), follow_symlinks=False)
    except NotImplementedError:
        pass
    except OSError as error:
        raise _CopyError(relative, error.strerror or str(error)) from None


def _copy_file(source: Path, target: Path, relative: str) -> None:
    try:
        reading = os.open(source, os.O_RDONLY | NOFOLLOW)
    except OSError as error:
        raise _CopyError(relative, error.strerror or str(error)) from None
    try:
        info = os.fstat(reading)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return  # replaced since it was listed: not copied, as a link or a FIFO is not
        writing = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
        try:
            copy_bytes(reading, writing, info.st_size)
            os.fchmod(writing, stat.S_IMODE(info.st_mode))
            os.utime(writing, ns=_times(info))
        finally:
            os.close(writing)
    except OSError as error:
        raise _CopyError(relative, error.strerror or str(error)) from None
    finally:
        os.close(reading)


def _copy_stat(source: Path, target: Path, info: os.stat_result, relative: str) -> None:
    """A folder's bits and times, set once its entries are in (a read-only folder stays
    writable until then)."""
    try:
        os.chmod(target, stat.S_IMODE(info.st_mode))
        os.utime(target, ns=_times(info))
    except OSError as error:
        raise _CopyError(relative, error.strerror or str(error)) from None


def _times(info: os.stat_result) -> tuple[int, int]:
    return (info.st_atime_ns, info.st_mtime_ns)

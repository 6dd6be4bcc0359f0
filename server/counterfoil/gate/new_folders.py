"""The folders a new file needs: named in its proposal, created only once it is approved,
listed in its receipt, and removed again (when still empty) by its revert.

The tiny-llm course refuses a file whose parent folder does not exist; that stays the core's
default, and the product turns this on (`ToolPolicy.create_parent_folders`) so that a person
who approves a file in a new folder gets the folder too, and sees it in the approval.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from ..errors import AgentError
from ..files.files import DIRECTORY_FLAGS, open_directory

NO_PARENT = "parent directory does not exist"


def missing_folders(root: Path, relative: str, allowed: bool) -> tuple[str, ...]:
    """The parent folders of `relative` that do not exist, outermost first ("a", "a/b");
    refused as the course refuses them unless `allowed`. `relative` is already resolved inside
    the root, so every part that exists is a real directory."""
    parts = PurePosixPath(relative).parts[:-1]
    missing: list[str] = []
    for index in range(len(parts)):
        folder = root.joinpath(*parts[: index + 1])
        if missing or not os.path.lexists(folder):
            missing.append("/".join(parts[: index + 1]))
        elif not folder.is_dir() or folder.is_symlink():
            raise AgentError(NO_PARENT)
    if missing and not allowed:
        raise AgentError(NO_PARENT)
    return tuple(missing)


def make_folders(root: Path, folders: tuple[str, ...]) -> tuple[str, ...]:
    """Create `folders` (outermost first) one directory descriptor at a time, never following a
    symlink; a folder that appeared since the proposal is a change, and nothing is created."""
    if not folders:
        return ()
    parent = PurePosixPath(folders[0]).parts[:-1]
    created: list[str] = []
    try:
        with open_directory(root, parent) as directory:
            fd = os.dup(directory)
        try:
            for folder in folders:
                name = PurePosixPath(folder).name
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    raise AgentError(f"{folder} appeared since the proposal") from None
                created.append(folder)
                child = os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
                os.fsync(fd)
                os.close(fd)
                fd = child
        finally:
            os.close(fd)
    except BaseException:
        remove_folders(root, tuple(created))
        raise
    return tuple(created)


@contextmanager
def folders_made(root: Path, folders: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """`folders` created for a write, and removed again if the write fails."""
    created = make_folders(root, folders)
    try:
        yield created
    except BaseException:
        remove_folders(root, created)
        raise


def remove_folders(root: Path, folders: tuple[str, ...]) -> tuple[str, ...]:
    """Remove `folders` innermost first while each is empty (a folder the person has since put
    files in is kept); returns those removed."""
    removed: list[str] = []
    for folder in reversed(folders):
        parts = PurePosixPath(folder).parts
        try:
            with open_directory(root, parts[:-1]) as directory:
                os.rmdir(parts[-1], dir_fd=directory)
                os.fsync(directory)
        except (AgentError, OSError):
            break
        removed.append(folder)
    return tuple(removed)

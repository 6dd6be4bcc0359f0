"""The Hugging Face cache's layout, and the names taken from a hub before they touch a path.

A hub is a server: the commit, each file's path and each ETag it sends become parts of paths
under the cache, so each is checked first (hex blob names and commit ids, relative file paths
without `..`); a hub answering `ETag: "../../../x"` writes nothing. The snapshot is laid out as
the hub client lays it out, from those checked names, without another request.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePosixPath

from ..errors import ModelDownloadError

COMMIT_NAME = re.compile(r"[0-9a-f]{40}")
BLOB_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a git blob id or an LFS SHA-256
INCOMPLETE_SUFFIX = ".incomplete"


def hub_name(name: object, pattern: re.Pattern[str], what: str, endpoint: str) -> str:
    """`name` when it is what a hub sends as `what` (hex digits), or the refusal."""
    if not isinstance(name, str) or not pattern.fullmatch(name):
        shown = repr(name)[:80]
        raise ModelDownloadError(
            f"{endpoint} sent {shown} as {what}, which is not one; nothing was saved"
        )
    return name


def checked_file_path(path: object, endpoint: str) -> str:
    """A repo file's path as the hub sent it, when it stays inside the snapshot folder."""
    pure = PurePosixPath(path) if isinstance(path, str) else None
    if (
        pure is None
        or not isinstance(path, str)
        or pure.is_absolute()
        or any(part in ("", ".", "..") for part in path.split("/"))
        or any(character in path for character in ("\\", "\0", ":"))
    ):
        raise ModelDownloadError(
            f"{endpoint} sent the file path {repr(path)[:80]}, which leaves the model's "
            "folder; nothing was saved"
        )
    return path


def link_snapshot(storage: Path, revision: str, commit: str, blobs: dict[str, str]) -> Path:
    """Lay out `refs/<revision>` and `snapshots/<commit>/<path>` -> `blobs/<etag>` as the hub
    client does (a copy where links cannot be made), from names already checked."""
    refs = storage / "refs"
    refs.mkdir(parents=True, exist_ok=True)
    if revision != commit:
        ref = refs.joinpath(*checked_file_path(revision, "the revision").split("/"))
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(commit, encoding="utf-8")
    folder = storage / "snapshots" / commit
    for path, etag in blobs.items():
        pointer = folder.joinpath(*path.split("/"))
        pointer.parent.mkdir(parents=True, exist_ok=True)
        blob = storage / "blobs" / etag
        if pointer.is_symlink() or pointer.exists():
            pointer.unlink()
        try:
            pointer.symlink_to(os.path.relpath(blob, pointer.parent))
        except OSError:
            shutil.copyfile(blob, pointer)
    return folder


def present_bytes(storage: Path, etag: str | None, size: int) -> int:
    if not etag:
        return 0
    blob = storage / "blobs" / etag
    if blob.exists():
        return size
    partial = blob.with_name(blob.name + INCOMPLETE_SUFFIX)
    try:
        return min(partial.stat().st_size, size)
    except OSError:
        return 0

"""Content-addressed objects beside the log: `<log folder>/objects/<sha256>`.

The bytes a receipt names by digest (a file before and after, a command's output) are kept
here, written and fsynced before the receipt counts, stored once per digest, and never reached
through a symlink: every step goes through directory descriptors opened with O_NOFOLLOW.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import AgentError

OBJECTS_FOLDER = "objects"
OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024
DIGEST = re.compile(r"[0-9a-f]{64}")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _open_objects(log_folder: Path, create: bool) -> int | None:
    try:
        folder = os.open(log_folder, _DIRECTORY_FLAGS)
    except OSError as error:
        raise AgentError(f"content store: cannot open {log_folder}: {error.strerror}") from None
    try:
        if create:
            try:
                os.mkdir(OBJECTS_FOLDER, 0o755, dir_fd=folder)
            except FileExistsError:
                pass
        try:
            return os.open(OBJECTS_FOLDER, _DIRECTORY_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise AgentError(f"content store is not a real folder: {error.strerror}") from None
    finally:
        os.close(folder)


def store_object(log_folder: Path, data: bytes) -> str:
    """Keep `data` under its SHA-256 (once) and return the digest."""
    digest = hashlib.sha256(data).hexdigest()
    objects = _open_objects(log_folder, create=True)
    assert objects is not None
    try:
        try:
            mode = os.stat(digest, dir_fd=objects, follow_symlinks=False).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None:
            if stat.S_ISREG(mode):
                return digest
            raise AgentError(f"content store: objects/{digest} is not a regular file")
        temporary = f".{digest}.{os.getpid()}.tmp"
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
            0o444,
            dir_fd=objects,
        )
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, digest, src_dir_fd=objects, dst_dir_fd=objects)
        os.fsync(objects)
    except OSError as error:
        raise AgentError(f"content store: could not write object: {error.strerror}") from None
    finally:
        os.close(objects)
    return digest


def load_object(log_folder: Path, digest: str) -> bytes | None:
    """The bytes stored under `digest`, checked against it; None when absent."""
    if not DIGEST.fullmatch(digest):
        return None
    objects = _open_objects(log_folder, create=False)
    if objects is None:
        return None
    try:
        fd = os.open(digest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=objects)
    except OSError:
        return None
    finally:
        os.close(objects)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data if hashlib.sha256(data).hexdigest() == digest else None


def collect_garbage(log_folder: Path, keep: Iterable[str]) -> list[str]:
    """Remove objects (and leftover temporary files) no receipt names; returns their names."""
    objects = _open_objects(log_folder, create=False)
    if objects is None:
        return []
    wanted = set(keep)
    removed: list[str] = []
    try:
        for name in sorted(os.listdir(objects)):
            if name in wanted:
                continue
            if DIGEST.fullmatch(name) or name.endswith(".tmp"):
                os.unlink(name, dir_fd=objects)
                removed.append(name)
    finally:
        os.close(objects)
    return removed

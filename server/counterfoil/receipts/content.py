"""Content-addressed objects beside the log: `<log folder>/objects/<sha256>`.

The bytes a receipt names by digest (a file before and after, a command's output) are kept
here, written and fsynced before the receipt counts, stored once per digest, and never reached
through a symlink: every step goes through directory descriptors opened with O_NOFOLLOW.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Self

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


def store_object(log_folder: Path, data: bytes, *, durable: bool = True) -> str:
    """Keep `data` under its SHA-256 (once) and return the digest. `durable=False` skips the
    fsyncs, for the many objects of a tree snapshot; `sync_objects` makes the few a receipt
    names durable before it counts."""
    digest = hashlib.sha256(data).hexdigest()
    objects = _open_objects(log_folder, create=True)
    assert objects is not None
    try:
        if _is_stored(objects, digest):
            return digest
        temporary = f".{digest}.{os.getpid()}.tmp"
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
            0o444,
            dir_fd=objects,
        )
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        _publish(objects, temporary, digest, durable=durable)
    except OSError as error:
        raise AgentError(f"content store: could not write object: {error.strerror}") from None
    finally:
        os.close(objects)
    return digest


def _is_stored(objects: int, digest: str) -> bool:
    try:
        mode = os.stat(digest, dir_fd=objects, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISREG(mode):
        return True
    raise AgentError(f"content store: objects/{digest} is not a regular file")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _publish(objects: int, temporary: str, digest: str, *, durable: bool = True) -> None:
    """Name a complete, fsynced temporary file by its digest; an object already there wins."""
    if _is_stored(objects, digest):
        os.unlink(temporary, dir_fd=objects)
    else:
        os.rename(temporary, digest, src_dir_fd=objects, dst_dir_fd=objects)
    if durable:
        os.fsync(objects)


def sync_objects(log_folder: Path, digests: Iterable[str]) -> None:
    """Fsync the named objects (those present) and their folder."""
    objects = _open_objects(log_folder, create=False)
    if objects is None:
        return
    try:
        for digest in digests:
            if not DIGEST.fullmatch(digest):
                continue
            try:
                fd = os.open(digest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=objects)
            except OSError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.fsync(objects)
    except OSError as error:
        raise AgentError(f"content store: could not sync objects: {error.strerror}") from None
    finally:
        os.close(objects)


class ObjectStream:
    """Bytes that arrive in pieces (a command's output), kept as one object: the first `limit`
    bytes go to a temporary file in the objects folder, hashed as they come, so memory stays
    bounded whatever the size; `finish` fsyncs it and names it by its digest.

    Without a log folder (a store in memory) nothing is written, but the digest is the same.
    A write that fails is remembered and raised by `finish`, so the producer (the command's
    read loop) never stops on it. Leaving the `with` block unfinished removes the temporary
    file.
    """

    def __init__(self, log_folder: Path | None, limit: int = OUTPUT_LIMIT_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self.truncated = False
        self._hash = hashlib.sha256()
        self._objects: int | None = None
        self._fd: int | None = None
        self._temporary = f".output.{os.getpid()}.{secrets.token_hex(8)}.tmp"
        self._error: OSError | None = None
        self._digest: str | None = None
        if log_folder is None:
            return
        self._objects = _open_objects(log_folder, create=True)
        try:
            self._fd = os.open(
                self._temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                0o444,
                dir_fd=self._objects,
            )
        except OSError as error:
            self.discard()
            raise AgentError(f"content store: could not write object: {error.strerror}") from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._digest is None:
            self.discard()

    def write(self, chunk: bytes) -> None:
        room = self.limit - self.size
        if len(chunk) > room:
            self.truncated = True
            chunk = chunk[:room]
        if not chunk:
            return
        self._hash.update(chunk)
        self.size += len(chunk)
        if self._fd is not None and self._error is None:
            try:
                _write_all(self._fd, chunk)
            except OSError as error:
                self._error = error

    def finish(self) -> str:
        """Fsync and name the kept bytes; returns their SHA-256. Raises AgentError (having
        removed the temporary file) when they could not be stored."""
        if self._digest is not None:
            return self._digest
        digest = self._hash.hexdigest()
        if self._objects is None:
            self._digest = digest
            return digest
        try:
            if self._error is not None:
                raise self._error
            assert self._fd is not None
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
            _publish(self._objects, self._temporary, digest)
        except OSError as error:
            self.discard()
            raise AgentError(f"content store: could not write object: {error.strerror}") from None
        except AgentError:
            self.discard()
            raise
        os.close(self._objects)
        self._objects = None
        self._digest = digest
        return digest

    def discard(self) -> None:
        """Remove the temporary file and let go of the folder; safe to call more than once."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._objects is not None:
            try:
                with contextlib.suppress(OSError):  # already renamed, or left for `receipts gc`
                    os.unlink(self._temporary, dir_fd=self._objects)
            finally:
                os.close(self._objects)
                self._objects = None


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

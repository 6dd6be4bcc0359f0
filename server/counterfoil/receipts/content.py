"""Content-addressed objects beside the log: `<log folder>/objects/<sha256>`.

The bytes a receipt names by digest (a file before and after, a command's output) are kept
here, written and fsynced before the receipt counts, stored once per digest, and never reached
through a symlink: every step goes through directory descriptors opened with O_NOFOLLOW.
Objects are readable by their owner alone (0400, in a 0700 folder; an existing folder is
narrowed on the next write), since they copy files that may have been private.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Self

from ..errors import AgentError
from ..files.files import OwnedDescriptor, closed_after, write_all
from .hold import ObjectHold, open_log_folder, open_private_folder, shared_folder_lock

OBJECTS_FOLDER = "objects"
OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024
OBJECT_MODE = 0o400  # no more readable than any source: its owner may read it, no one else
DIGEST = re.compile(r"[0-9a-f]{64}")


def _open_objects(log_folder: Path, create: bool) -> int | None:
    folder = open_log_folder(log_folder)
    try:
        return open_private_folder(folder, OBJECTS_FOLDER, create)
    finally:
        os.close(folder)


def store_object(
    log_folder: Path, data: bytes, hold: ObjectHold | None = None, *, durable: bool = True
) -> str:
    """Keep `data` under its SHA-256 (once) and return the digest; `hold` (a store's) keeps
    it from `receipts gc` until a receipt names it, else it is held only while written.
    `durable=False` skips the fsyncs, for the many objects of a tree snapshot;
    `sync_objects` makes the few a receipt names durable before it counts."""
    digest = hashlib.sha256(data).hexdigest()
    _check_hold(hold, log_folder)
    own = hold is None
    hold = ObjectHold(log_folder) if hold is None else hold
    try:
        with shared_folder_lock(log_folder) as folder:
            objects = open_private_folder(folder, OBJECTS_FOLDER, create=True)
            assert objects is not None
            try:
                hold.add(folder, digest)
                if _is_stored(objects, digest):
                    return digest
                temporary = f".{digest}.{secrets.token_hex(6)}.tmp"
                hold.add(folder, temporary)
                fd = os.open(
                    temporary,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                    OBJECT_MODE,
                    dir_fd=objects,
                )
                try:
                    write_all(fd, data)
                    if durable:
                        os.fsync(fd)
                finally:
                    os.close(fd)
                _publish(objects, temporary, digest, durable=durable)
            except OSError as error:
                raise AgentError(
                    f"content store: could not write object: {error.strerror}"
                ) from None
            finally:
                os.close(objects)
    finally:
        if own:
            hold.close()
    return digest


def _check_hold(hold: ObjectHold | None, log_folder: Path) -> None:
    """A hold lists names of its own folder's store: one from another folder would leave its
    hold file where the objects are not (and gc would not see it)."""
    if hold is not None and hold.log_folder != log_folder:
        raise ValueError(f"a hold of {hold.log_folder} cannot hold objects in {log_folder}")


def _is_stored(objects: int, digest: str) -> bool:
    try:
        mode = os.stat(digest, dir_fd=objects, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISREG(mode):
        return True
    raise AgentError(f"content store: objects/{digest} is not a regular file")


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
            with closed_after(fd):
                os.fsync(fd)
        os.fsync(objects)
    except OSError as error:
        raise AgentError(f"content store: could not sync objects: {error.strerror}") from None
    finally:
        os.close(objects)


class ObjectStream:
    """Bytes that arrive in pieces (a command's output), kept as one object: the first `limit`
    bytes go to a temporary file in the objects folder, hashed as they come, so memory stays
    bounded whatever the size; `finish` fsyncs it and names it by its digest. The temporary
    file and the object are listed in `hold` first, so `receipts gc` leaves them alone.

    Without a log folder (a store in memory) nothing is written, but the digest is the same.
    A write that fails is remembered and raised by `finish`, so the producer (the command's
    read loop) never stops on it. Leaving the `with` block unfinished removes the temporary
    file.
    """

    def __init__(
        self,
        log_folder: Path | None,
        limit: int = OUTPUT_LIMIT_BYTES,
        hold: ObjectHold | None = None,
    ) -> None:
        self.limit = limit
        self.size = 0
        self.truncated = False
        self._hash = hashlib.sha256()
        self._log_folder = log_folder
        self._objects: int | None = None
        self._file = OwnedDescriptor()  # the temporary file
        self._temporary = f".output.{os.getpid()}.{secrets.token_hex(8)}.tmp"
        self._error: OSError | None = None
        self._digest: str | None = None
        if log_folder is not None:
            _check_hold(hold, log_folder)
        self._own_hold = hold is None and log_folder is not None
        self._hold = ObjectHold(log_folder) if hold is None and log_folder is not None else hold
        if log_folder is None:
            return
        assert self._hold is not None
        with self._discarded_on_failure(), shared_folder_lock(log_folder) as folder:
            self._objects = open_private_folder(folder, OBJECTS_FOLDER, create=True)
            self._hold.add(folder, self._temporary)
            self._file.fd = os.open(
                self._temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                OBJECT_MODE,
                dir_fd=self._objects,
            )

    @contextlib.contextmanager
    def _discarded_on_failure(self) -> Iterator[None]:
        """A failure while the object is half-made removes what was made, and says so in
        the store's one sentence (an OSError) or its own (an AgentError)."""
        try:
            yield
        except OSError as error:
            self.discard()
            raise AgentError(f"content store: could not write object: {error.strerror}") from None
        except AgentError:
            self.discard()
            raise

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
        if self._file.fd is not None and self._error is None:
            try:
                write_all(self._file.fd, chunk)
            except OSError as error:
                self._error = error

    def finish(self) -> str:
        """Fsync and name the kept bytes; returns their SHA-256. Raises AgentError (having
        removed the temporary file) when they could not be stored."""
        if self._digest is not None:
            return self._digest
        digest = self._hash.hexdigest()
        if self._objects is None or self._log_folder is None:
            self._digest = digest
            return digest
        assert self._hold is not None
        with self._discarded_on_failure():
            if self._error is not None:
                raise self._error
            assert self._file.fd is not None
            os.fsync(self._file.fd)
            self._file.close()
            with shared_folder_lock(self._log_folder) as folder:
                self._hold.add(folder, digest)
                _publish(self._objects, self._temporary, digest)
        os.close(self._objects)
        self._objects = None
        self._digest = digest
        self._release_own_hold()
        return digest

    def discard(self) -> None:
        """Remove the temporary file and let go of the folder; safe to call more than once."""
        self._file.close()
        if self._objects is not None:
            try:
                with contextlib.suppress(OSError):  # already renamed, or left for `receipts gc`
                    os.unlink(self._temporary, dir_fd=self._objects)
            finally:
                os.close(self._objects)
                self._objects = None
        self._release_own_hold()

    def _release_own_hold(self) -> None:
        if self._own_hold and self._hold is not None:
            self._hold.close()


def load_object(log_folder: Path, digest: str) -> bytes | None:
    """The bytes stored under `digest`, checked against it; None when absent."""
    found = load_object_prefix(log_folder, digest, None)
    return None if found is None else found[0]


def load_object_prefix(
    log_folder: Path, digest: str, limit: int | None
) -> tuple[bytes, int] | None:
    """The first `limit` bytes stored under `digest` (all of them for None) and the object's
    size; every byte is hashed and checked against the digest, but no more than `limit` is
    held in memory. None when absent or when the bytes do not match."""
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
    kept: list[bytes] = []
    size = 0

    def keep(chunk: bytes) -> None:
        nonlocal size
        if limit is None or size < limit:
            kept.append(chunk if limit is None else chunk[: limit - size])
        size += len(chunk)

    if regular_file_sha256(fd, keep) != digest:
        return None
    return b"".join(kept), size


def regular_file_sha256(fd: int, each_chunk: Callable[[bytes], None] | None = None) -> str | None:
    """The SHA-256 of the regular file open at `fd`, read a MiB at a time (each chunk handed
    to `each_chunk` too, so no more than the caller keeps is held), `fd` closed after; None,
    unread, when it is not a regular file (a FIFO would block, a folder has no bytes)."""
    hashed = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        while chunk := os.read(fd, 1 << 20):
            hashed.update(chunk)
            if each_chunk is not None:
                each_chunk(chunk)
    finally:
        os.close(fd)
    return hashed.hexdigest()


def is_temporary_object(name: str) -> bool:
    """A file an interrupted or running write left in the objects folder."""
    return name.startswith(".") and name.endswith(".tmp")

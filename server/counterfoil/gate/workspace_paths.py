"""The workspace's path rules: where a model-given path may go, and how the receipt log, its
head and its content store stay out of reach under any name.

Nothing here reads a file's text for the model, changes a file, or records anything."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Protocol

from ..errors import AgentError, MissingPath
from ..files.files import (
    FileIdentity,
    file_identity,
    open_directory,
    read_regular_file,
    refuse_hard_links,
)
from ..files.paths import RESERVED_FOLDER, protected_walk_matcher, relative_parts
from ..receipts import ReceiptStore
from ..receipts.counterfoil_folders import counterfoil_folders, within
from .policy import ToolPolicy

# Whether a walk or a listing leaves out an entry: (its parts under the root, its lstat).
HiddenEntry = Callable[[Sequence[str], os.stat_result], bool]


class Resolve(Protocol):
    """`resolve_path` as the workspace exposes it (the parts call it through the workspace, so
    a wrapper put on the workspace is the one every part uses)."""

    def __call__(self, raw: str, *, must_exist: bool = True) -> Path: ...


class WorkspacePaths:
    """Paths confined to `policy.root`, with the receipt log out of reach."""

    def __init__(self, policy: ToolPolicy, receipt_store: ReceiptStore) -> None:
        self.policy = policy
        self.receipt_store = receipt_store
        self.counterfoil_folders = counterfoil_folders()

    def resolve_path(self, raw: str, *, must_exist: bool = True) -> Path:
        """Map a model-given path into the root, refusing anything that could leave it."""
        parts = relative_parts(raw, self.policy.protected_patterns)
        root = self.policy.root
        current = root
        for part in parts:
            current = current / part
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                if must_exist:
                    raise MissingPath("/".join(parts)) from None
                missing = root.joinpath(*parts)
                if self.is_receipt_log(missing):
                    raise AgentError("path is not accessible")
                return missing
            except OSError as error:
                if error.errno == errno.ENAMETOOLONG:
                    raise AgentError("path is too long") from None
                raise AgentError("path is not accessible") from None
            if stat.S_ISLNK(info.st_mode):
                raise AgentError("symlinks are not accessible")
        try:
            resolved = current.resolve()
            resolved.relative_to(root)
        except (ValueError, OSError):
            raise AgentError("path is not accessible") from None
        if parts and (
            self.is_receipt_log(resolved) or file_identity(info) in self.receipt_log_identities()
        ):
            raise AgentError("path is not accessible")
        if parts:
            refuse_hard_links(info)
        return current

    def is_receipt_log(self, path: Path) -> bool:
        """The agent may neither read nor rewrite the log that records what it did, its head or
        its content store; a log not yet written is known by its path, letter case aside for
        case-insensitive disks. Nor Counterfoil's own folders (the config folder with the
        installation secret and the signing key, the cache) where the root holds them."""
        if self.receipt_store.guards(path, self.policy.root):
            return True
        if within(path, self.counterfoil_folders):
            return True
        log = self.receipt_store.path
        return log is not None and str(path).casefold() == str(log.resolve()).casefold()

    def hidden_entries(self) -> HiddenEntry:
        """The one rule for what the model never sees of a folder's entries: `list_files`,
        the overview and "nearby" all leave out what it hides, so none names what another
        refuses. Hidden: a protected name or pattern, the artifact folder's name at the top,
        the receipt log (by path or by identity), its head and store, and Counterfoil's own
        folders (the config folder with the installation secret and the folder grants, the
        cache) where the root holds them. Each parent of an entry asked about must have been
        asked about (or resolved) already: the patterns are tried only on runs that end at
        the entry's own name."""
        protected = protected_walk_matcher(self.policy.protected_patterns)
        log = self.receipt_log_identities()
        root = self.policy.root

        def hidden(child: Sequence[str], info: os.stat_result) -> bool:
            return (
                (len(child) == 1 and child[0].casefold() == RESERVED_FOLDER)
                or protected(child)
                or file_identity(info) in log
                or self.is_receipt_log(root.joinpath(*child))
            )

        return hidden

    def receipt_log_identities(self) -> frozenset[FileIdentity]:
        """The log's file by device and inode, so no other name (a hard link, a change of
        letter case) reaches it; the file it links to as well, if it is a symlink."""
        log = self.receipt_store.path
        identities: set[FileIdentity] = set()
        if log is not None:
            look: Callable[[Path], os.stat_result]
            for look in (os.lstat, os.stat):
                try:
                    identities.add(file_identity(look(log)))
                except OSError:
                    pass
        return frozenset(identities)

    def relative(self, path: Path) -> str:
        return path.relative_to(self.policy.root).as_posix() or "."

    def read_bytes(self, relative: str, limit: int | None = None) -> bytes:
        """A regular file's bytes through directory descriptors, the log refused by identity."""
        parts = PurePosixPath(relative).parts
        with open_directory(self.policy.root, parts[:-1]) as directory:
            return read_regular_file(
                directory,
                parts[-1],
                self.policy.max_file_bytes if limit is None else limit,
                self.receipt_log_identities(),
            )

"""The workspace's paths and reads: where a path may go, listing, reading and searching files.

Nothing here changes a file, so nothing here asks the person or leaves a receipt.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from ..errors import AgentError
from ..search.engine import search_tree
from .files import (
    FileIdentity,
    directory_entries,
    file_identity,
    open_directory,
    read_regular_file,
    refuse_hard_links,
)
from .line_ranges import check_line_range, render_line_range
from .paths import (
    is_protected_path,
    protected_walk_matcher,
    relative_parts,
)
from .proposals import (
    sha256_hex,
)
from .workspace_record import WorkspaceRecord


class WorkspaceReads(WorkspaceRecord):
    """Paths confined to `policy.root`, and the read tools on them."""

    def resolve_path(self, raw: str, *, must_exist: bool = True) -> Path:
        """Map a model-given path into the root, refusing anything that could leave it."""
        parts = relative_parts(raw, self.policy.protected_patterns)
        root = self.policy.root
        current = root
        for index, part in enumerate(parts):
            current = current / part
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                if must_exist:
                    raise AgentError("path is not accessible") from None
                missing = root.joinpath(*parts)
                if self._is_receipt_log(missing):
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
            self._is_receipt_log(resolved) or file_identity(info) in self._receipt_log_identities()
        ):
            raise AgentError("path is not accessible")
        if parts:
            refuse_hard_links(info)
        return current

    def _is_receipt_log(self, path: Path) -> bool:
        """The agent may neither read nor rewrite the log that records what it did, its head or
        its content store; a log not yet written is known by its path, letter case aside for
        case-insensitive disks."""
        if self.receipt_store.guards(path, self.policy.root):
            return True
        log = self.receipt_store.path
        return log is not None and str(path).casefold() == str(log.resolve()).casefold()

    def _receipt_log_identities(self) -> frozenset[FileIdentity]:
        """The log's file by device and inode, so no other name (a hard link, a change of
        letter case) reaches it; the file it links to as well, if it is a symlink."""
        log = self.receipt_store.path
        identities: set[FileIdentity] = set()
        if log is not None:
            for look in (os.lstat, os.stat):
                try:
                    identities.add(file_identity(look(log)))
                except OSError:
                    pass
        return frozenset(identities)

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.policy.root).as_posix() or "."

    def list_files(self, raw: str = ".") -> str:
        """The directory's children, read through descriptors opened without following links,
        so a directory swapped for a symlink after the checks is refused, not listed."""
        path = self.resolve_path(raw)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise AgentError("path is not a directory")
        parts = path.relative_to(self.policy.root).parts
        log = self._receipt_log_identities()
        lines: list[str] = []
        with open_directory(self.policy.root, parts) as directory:
            for name, info in directory_entries(directory):
                child = (*parts, name)
                if (
                    is_protected_path(child, self.policy.protected_patterns)
                    or file_identity(info) in log
                    or self.receipt_store.guards(
                        self.policy.root.joinpath(*child), self.policy.root
                    )
                ):
                    continue
                relative = "/".join(child)
                if stat.S_ISDIR(info.st_mode):
                    lines.append(f"dir {relative}")
                elif stat.S_ISREG(info.st_mode):
                    lines.append(f"file {relative}")
                if len(lines) >= self.policy.max_list_entries:
                    break
        return "\n".join(lines) if lines else "(empty directory)"

    def read_file(
        self, raw: str, start_line: int | None = None, end_line: int | None = None
    ) -> str:
        """The whole text, or with a line range the lines asked for (of a file of any size
        up to `max_ranged_file_bytes`); either way the digest recorded is of all its bytes."""
        ranged = start_line is not None or end_line is not None
        start, end = check_line_range(start_line, end_line)
        path = self.resolve_path(raw)
        relative = self._relative(path)
        if relative == ".":
            raise AgentError("path is not a regular file")
        limit = self.policy.max_ranged_file_bytes if ranged else self.policy.max_file_bytes
        data = self._read_bytes(relative, limit)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise AgentError("file is not valid UTF-8") from None
        self._read_digests[relative] = sha256_hex(data)
        if ranged:
            return render_line_range(text, start, end, self.policy.max_file_bytes)
        return text

    def _read_bytes(self, relative: str, limit: int | None = None) -> bytes:
        parts = PurePosixPath(relative).parts
        with open_directory(self.policy.root, parts[:-1]) as directory:
            return read_regular_file(
                directory,
                parts[-1],
                self.policy.max_file_bytes if limit is None else limit,
                self._receipt_log_identities(),
            )

    def search_files(self, pattern: str, raw: str = ".", literal: bool = False) -> str:
        """`path:line: text` for each matching line, under the same rules as reads."""
        start = self.resolve_path(raw)
        if not (start.is_dir() or start.is_file()):
            raise AgentError("path is not a regular file")

        # Both engines ask about every folder on a path before its entries, so only the runs
        # of parts that end at the last one are new (a walk's rule, not a path's).
        protected = protected_walk_matcher(self.policy.protected_patterns)
        has_log = self.receipt_store.path is not None

        def hidden(relative: str) -> bool:
            parts = relative.split("/")
            return protected(parts) or (
                has_log and self._is_receipt_log(self.policy.root.joinpath(*parts))
            )

        result = search_tree(
            self.policy.root,
            start,
            pattern,
            literal=literal,
            hidden=hidden,
            limits=self.search_limits,
            engine=self.search_engine,
        )
        return result.observation(self.search_limits.max_line_chars)

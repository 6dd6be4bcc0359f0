"""The workspace's reads: listing, reading and searching files where the path rules allow.

Nothing here changes a file, so nothing here asks the person or leaves a receipt; a read is
noted in the record as seen, so a later change is checked against the bytes the model read.
Each read returns its `CallRecord`: the observation, the lines a ranged read showed, the lines
a search found.
"""

from __future__ import annotations

import os
import stat

from ..errors import AgentError, DetailedRefusal
from ..files.files import directory_entries, open_directory
from ..files.paths import protected_walk_matcher
from ..proposals import sha256_hex
from ..search.engine import search_tree
from ..step_facts import NotAFolder, SearchHits
from .call_record import CallRecord
from .line_ranges import check_line_range, render_line_range
from .policy import ToolPolicy
from .workspace_paths import Resolve, WorkspacePaths
from .workspace_record import WorkspaceRecord


class WorkspaceReads:
    """The read tools on paths the path rules allow; each read is recorded as seen."""

    def __init__(self, paths: WorkspacePaths, record: WorkspaceRecord, resolve: Resolve) -> None:
        self.paths = paths
        self.record = record
        self.resolve = resolve

    @property
    def policy(self) -> ToolPolicy:
        return self.paths.policy

    def list_files(self, raw: str = ".") -> CallRecord:
        """The directory's children, read through descriptors opened without following links,
        so a directory swapped for a symlink after the checks is refused, not listed."""
        path = self.resolve(raw)
        mode = os.lstat(path).st_mode
        if stat.S_ISREG(mode):
            raise DetailedRefusal("path is not a directory", NotAFolder(self.paths.relative(path)))
        if not stat.S_ISDIR(mode):
            raise AgentError("path is not a directory")
        parts = path.relative_to(self.policy.root).parts
        hidden = self.paths.hidden_entries()
        lines: list[str] = []
        with open_directory(self.policy.root, parts) as directory:
            for name, info in directory_entries(directory):
                child = (*parts, name)
                if hidden(child, info):
                    continue
                relative = "/".join(child)
                if stat.S_ISDIR(info.st_mode):
                    lines.append(f"dir {relative}")
                elif stat.S_ISREG(info.st_mode):
                    lines.append(f"file {relative}")
                if len(lines) >= self.policy.max_list_entries:
                    break
        return CallRecord("\n".join(lines) if lines else "(empty directory)")

    def read_file(
        self, raw: str, start_line: int | None = None, end_line: int | None = None
    ) -> CallRecord:
        """The whole text, or with a line range the lines asked for (of a file of any size
        up to `max_ranged_file_bytes`); either way the digest recorded is of all its bytes."""
        ranged = start_line is not None or end_line is not None
        start, end = check_line_range(start_line, end_line)
        path = self.resolve(raw)
        relative = self.paths.relative(path)
        if relative == ".":
            raise AgentError("path is not a regular file")
        limit = self.policy.max_ranged_file_bytes if ranged else self.policy.max_file_bytes
        data = self.paths.read_bytes(relative, limit)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise AgentError("file is not valid UTF-8") from None
        self.record.seen[relative] = sha256_hex(data)
        if ranged:
            shown, lines = render_line_range(text, start, end, self.policy.max_file_bytes)
            return CallRecord(shown, lines=lines)
        return CallRecord(text)

    def search_files(self, pattern: str, raw: str = ".", literal: bool = False) -> CallRecord:
        """`path:line: text` for each matching line, under the same rules as reads."""
        start = self.resolve(raw)
        if not (start.is_dir() or start.is_file()):
            raise AgentError("path is not a regular file")

        # Both engines ask about every folder on a path before its entries, so only the runs
        # of parts that end at the last one are new (a walk's rule, not a path's).
        protected = protected_walk_matcher(self.policy.protected_patterns)

        def hidden(relative: str) -> bool:
            parts = relative.split("/")
            return protected(parts) or self.paths.is_receipt_log(self.policy.root.joinpath(*parts))

        result = search_tree(
            self.policy.root,
            start,
            pattern,
            literal=literal,
            hidden=hidden,
            limits=self.record.setup.search_limits,
            engine=self.record.setup.search_engine,
        )
        return CallRecord(
            result.observation(self.record.setup.search_limits.max_line_chars),
            search=SearchHits(len(result.hits), complete=result.stopped is None),
        )

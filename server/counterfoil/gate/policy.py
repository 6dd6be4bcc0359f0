"""What the agent may touch: one root, size limits, writes on or off, an exact-argv allowlist.

`protected_patterns` adds to the built-in protected names (see paths.py): fnmatch patterns,
matched case-insensitively against each name, or against consecutive parts when they hold `/`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..commands.runner import ResourceLimits
from ..commands.tree.sandbox import SANDBOX_MODES
from ..receipts.content import OUTPUT_LIMIT_BYTES
from ..tools import EDIT_FORMS, is_argv
from .grants import FROM_SETTINGS, GrantedBy


@dataclass(frozen=True)
class ToolPolicy:
    root: Path
    max_file_bytes: int = 64 * 1024
    max_list_entries: int = 200
    allow_writes: bool = False
    allowed_commands: tuple[tuple[str, ...], ...] = ()
    max_write_bytes: int = 64 * 1024
    command_timeout_seconds: float = 30.0
    protected_patterns: tuple[str, ...] = ()
    pass_environment: tuple[str, ...] = ()  # names passed to commands besides the core ones
    withheld_environment: tuple[str, ...] = ()  # never passed (the model server's key variable)
    limit_cpu_seconds: int | None = None
    limit_memory_bytes: int | None = None
    limit_processes: int | None = None
    # Beyond the course: searching contents, and reading (and editing) big files by lines.
    allow_search: bool = False
    max_ranged_file_bytes: int = 16 * 1024 * 1024
    max_command_output_bytes: int = OUTPUT_LIMIT_BYTES  # kept in the content store per command
    # Beyond the course (which refuses them): a new file's missing folders, created on approval.
    create_parent_folders: bool = False
    command_sandbox: str = "off"  # or "confine" / "review" (see commands/tree/sandbox.py)
    allow_network: bool = False  # for a confined command; `off` does not limit the network
    # What a confined command can neither read nor write (an evaluation's package and log).
    hidden_paths: tuple[Path, ...] = ()
    # Where the writes and commands allowed came from, for each receipt's approval.
    granted_by: GrantedBy = FROM_SETTINGS
    # More files whose writes must parse (`PATTERN=FORMAT`, see gate/syntax.py).
    parsed_files: tuple[str, ...] = ()
    # The only paths a write or an edit may change, each a file or a folder (None: any): a
    # task's rule, so a change outside them is refused before anyone is asked.
    editable_paths: tuple[str, ...] | None = None
    # How the model edits part of a file (a key of `tools.EDIT_FORMS`): old and new texts, or
    # a diff's hunk; either is the same exact edit once the gate has read it.
    edit_form: str = "replace"

    def __post_init__(self) -> None:
        root = Path(self.root)
        if not root.exists():
            raise ValueError(f"workspace root does not exist: {root}")
        if root.is_symlink():
            raise ValueError(f"workspace root must not be a symlink: {root}")
        if not root.is_dir():
            raise ValueError(f"workspace root must be a directory: {root}")
        object.__setattr__(self, "root", root.resolve())
        self._check_switches_and_limits()
        self._check_lists()
        object.__setattr__(
            self, "hidden_paths", tuple(Path(path).resolve() for path in self.hidden_paths)
        )

    def _check_switches_and_limits(self) -> None:
        for limit in (
            self.max_file_bytes,
            self.max_list_entries,
            self.max_write_bytes,
            self.max_ranged_file_bytes,
            self.max_command_output_bytes,
        ):
            if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
                raise ValueError("workspace limits must be positive integers")
        if not isinstance(self.allow_writes, bool):
            raise ValueError("allow_writes must be a boolean")
        if not isinstance(self.allow_search, bool):
            raise ValueError("allow_search must be a boolean")
        if not isinstance(self.create_parent_folders, bool):
            raise ValueError("create_parent_folders must be a boolean")
        if self.command_sandbox not in SANDBOX_MODES:
            raise ValueError(f"command_sandbox must be one of {', '.join(SANDBOX_MODES)}")
        if not isinstance(self.allow_network, bool):
            raise ValueError("allow_network must be a boolean")
        if self.edit_form not in EDIT_FORMS:
            raise ValueError(f"edit_form must be one of {', '.join(EDIT_FORMS)}")
        timeout = self.command_timeout_seconds
        if (
            not isinstance(timeout, (int, float))
            or isinstance(timeout, bool)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ValueError("command timeout must be finite and positive")
        for command_limit in (
            self.limit_cpu_seconds,
            self.limit_memory_bytes,
            self.limit_processes,
        ):
            if command_limit is not None and (
                not isinstance(command_limit, int)
                or isinstance(command_limit, bool)
                or command_limit <= 0
            ):
                raise ValueError("command limits must be positive integers")

    def _check_lists(self) -> None:
        if not isinstance(self.hidden_paths, tuple) or not all(
            isinstance(path, Path) for path in self.hidden_paths
        ):
            raise ValueError("hidden paths must be a tuple of paths")
        commands = self.allowed_commands
        if not isinstance(commands, tuple) or not all(isinstance(c, tuple) for c in commands):
            raise ValueError("allowed commands must be a tuple of tuples")
        for command in commands:
            if not is_argv(command):
                raise ValueError("allowed commands must contain non-empty strings without NUL")
        patterns = self.protected_patterns
        editable = () if self.editable_paths is None else self.editable_paths
        if not isinstance(patterns, tuple) or not all(
            isinstance(pattern, str) and pattern.strip() and "\0" not in pattern
            for pattern in patterns
        ):
            raise ValueError("protected patterns must be a tuple of non-empty strings without NUL")
        for label, items in (("parsed_files", self.parsed_files), ("editable_paths", editable)):
            if not isinstance(items, tuple) or not all(
                isinstance(item, str) and item and "\0" not in item for item in items
            ):
                raise ValueError(f"{label} must be a tuple of non-empty strings without NUL")
        for label, names in (
            ("pass_environment", self.pass_environment),
            ("withheld_environment", self.withheld_environment),
        ):
            if not isinstance(names, tuple) or not all(
                isinstance(name, str) and name and "=" not in name and "\0" not in name
                for name in names
            ):
                raise ValueError(f"{label} must be a tuple of variable names")

    def editable(self, path: str) -> bool:
        """Whether a write or an edit may change `path` (relative to the root)."""
        if self.editable_paths is None:
            return True
        return any(
            path == allowed or path.startswith(allowed.rstrip("/") + "/")
            for allowed in self.editable_paths
        )

    @property
    def command_limits(self) -> ResourceLimits:
        return ResourceLimits(self.limit_cpu_seconds, self.limit_memory_bytes, self.limit_processes)

"""The model-facing gate: every tool call is checked, approved by a person, done, and recorded."""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from . import tools
from .actions import EFFECT_TOOLS, ToolAction, check_arguments
from .commands import run_bounded
from .errors import AgentError
from .files import entry_mode, open_directory, read_regular_file, replace_file
from .line_ranges import check_line_range, render_line_range
from .policy import ToolPolicy
from .proposals import CommandProposal, EditProposal, ToolProposal, sha256_hex
from .receipts import EffectReceipt, ReceiptStore
from .search import SearchLimits, search_tree

PROTECTED_NAMES = frozenset({".aws", ".env", ".git", ".ssh", "credentials", "id_ed25519", "id_rsa"})
MAX_PATH_CHARS = 4096

ConfirmTool = Callable[[ToolAction], object]
ConfirmProposal = Callable[[ToolProposal], object]


def is_protected_name(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered in PROTECTED_NAMES
        or lowered.startswith(".env.")
        or lowered.endswith((".key", ".pem"))
    )


def _relative_parts(raw: object) -> tuple[str, ...]:
    """The normalised parts of a model-given path, or the first rule it breaks."""
    if not isinstance(raw, str) or not raw:
        raise AgentError("path must be a non-empty string")
    if "\0" in raw:
        raise AgentError("path must not contain NUL bytes")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise AgentError("path must be valid Unicode text") from None
    if len(raw) > MAX_PATH_CHARS:
        raise AgentError("path is too long")
    pure = PurePosixPath(raw)
    if pure.is_absolute() or ".." in pure.parts:
        raise AgentError("path must be relative and stay in the workspace")
    parts = tuple(part for part in pure.parts if part != ".")
    if any(is_protected_name(part) for part in parts):
        raise AgentError("path is not accessible")
    return parts


class Workspace:
    """Tools confined to `policy.root`; effects need approval and leave a receipt."""

    def __init__(
        self,
        policy: ToolPolicy,
        confirm_tool: ConfirmTool | None = None,
        receipt_store: ReceiptStore | None = None,
        *,
        confirm_proposal: ConfirmProposal | None = None,
    ) -> None:
        self.policy = policy
        self.confirm_tool = confirm_tool
        self.confirm_proposal = confirm_proposal
        self.receipt_store = receipt_store if receipt_store is not None else ReceiptStore()
        self._read_digests: dict[str, str] = {}
        self._modified: set[str] = set()
        self._next_call = 1
        self._call_ids = threading.Lock()
        self.search_limits = SearchLimits()
        self.search_engine = "auto"  # or "ripgrep" / "python", to pin one engine

    @property
    def available_tools(self) -> frozenset[str]:
        return tools.enabled_tools(
            self.policy.allow_writes, self.policy.allowed_commands, self.policy.allow_search
        )

    @property
    def modified_files(self) -> tuple[str, ...]:
        return tuple(sorted(self._modified))

    # Paths

    def resolve_path(self, raw: str, *, must_exist: bool = True) -> Path:
        """Map a model-given path into the root, refusing anything that could leave it."""
        parts = _relative_parts(raw)
        root = self.policy.root
        current = root
        for index, part in enumerate(parts):
            current = current / part
            try:
                mode = os.lstat(current).st_mode
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
            if stat.S_ISLNK(mode):
                raise AgentError("symlinks are not accessible")
        try:
            resolved = current.resolve()
            resolved.relative_to(root)
        except (ValueError, OSError):
            raise AgentError("path is not accessible") from None
        if self._is_receipt_log(resolved):
            raise AgentError("path is not accessible")
        return current

    def _is_receipt_log(self, path: Path) -> bool:
        """The agent may neither read nor rewrite the log that records what it did."""
        log = self.receipt_store.path
        return log is not None and path == log.resolve()

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.policy.root).as_posix() or "."

    # Reads

    def list_files(self, raw: str = ".") -> str:
        path = self.resolve_path(raw)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise AgentError("path is not a directory")
        lines: list[str] = []
        with os.scandir(path) as entries:
            for entry in sorted(entries, key=lambda item: item.name):
                if (
                    is_protected_name(entry.name)
                    or entry.is_symlink()
                    or self._is_receipt_log(Path(entry.path))
                ):
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
                relative = self._relative(Path(entry.path))
                if stat.S_ISDIR(mode):
                    lines.append(f"dir {relative}")
                elif stat.S_ISREG(mode):
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
                directory, parts[-1], self.policy.max_file_bytes if limit is None else limit
            )

    def search_files(self, pattern: str, raw: str = ".", literal: bool = False) -> str:
        """`path:line: text` for each matching line, under the same rules as reads."""
        start = self.resolve_path(raw)
        if not (start.is_dir() or start.is_file()):
            raise AgentError("path is not a regular file")
        log = self.receipt_store.path
        log_relative = None
        if log is not None and log.resolve().is_relative_to(self.policy.root):
            log_relative = log.resolve().relative_to(self.policy.root).as_posix()

        def hidden(relative: str) -> bool:
            return relative == log_relative or is_protected_name(relative.rpartition("/")[2])

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

    # Effects: each is a proposal, an approval, then the effect itself

    def write_file(self, raw: str, content: str) -> str:
        action = ToolAction("write_file", {"path": raw, "content": content})
        return self._perform_approved(self._propose_file(action, self._allocate_id()))

    def edit_file(self, raw: str, old: str, new: str) -> str:
        action = ToolAction("edit_file", {"path": raw, "old": old, "new": new})
        return self._perform_approved(self._propose_file(action, self._allocate_id()))

    def run_command(self, argv: list[str]) -> str:
        action = ToolAction("run_command", {"argv": argv})
        return self._perform_approved(self._propose_command(action, self._allocate_id()))

    def propose(self, action: ToolAction, tool_call_id: str) -> ToolProposal:
        """Check an effect completely and describe exactly what it would do."""
        if action.tool == "run_command":
            return self._propose_command(action, tool_call_id)
        return self._propose_file(action, tool_call_id)

    def _propose_file(self, action: ToolAction, tool_call_id: str) -> EditProposal:
        if not self.policy.allow_writes:
            raise AgentError("writes are not enabled")
        arguments = action.arguments
        path = self.resolve_path(arguments["path"], must_exist=action.tool == "edit_file")
        relative = self._relative(path)
        if not path.parent.is_dir():
            raise AgentError("parent directory does not exist")
        exists = os.path.lexists(path)
        if exists and not stat.S_ISREG(os.lstat(path).st_mode):
            raise AgentError("path is not a regular file")
        base_text: str | None = None
        base_digest: str | None = None
        if exists:
            recorded = self._read_digests.get(relative)
            if recorded is None:
                raise AgentError("read the existing file before changing it")
            data = self._read_bytes(relative, self.policy.max_ranged_file_bytes)
            if sha256_hex(data) != recorded:
                raise AgentError("file changed since it was read")
            base_text = data.decode("utf-8")
            base_digest = recorded
        if action.tool == "edit_file":
            old, new = arguments["old"], arguments["new"]
            if base_text is None:
                raise AgentError("path is not accessible")
            if not old or base_text.count(old) != 1:
                raise AgentError("old text must occur exactly once")
            proposed = base_text.replace(old, new, 1)
        else:
            proposed = arguments["content"]
        try:
            encoded = proposed.encode("utf-8")
        except UnicodeEncodeError:
            raise AgentError("content must be valid Unicode text") from None
        write_limit = self._write_limit(action.tool, base_text)
        if len(encoded) > write_limit:
            raise AgentError(f"write exceeds {write_limit} bytes")
        return EditProposal(
            tool_call_id=tool_call_id,
            action=action,
            path=relative,
            base_text=base_text,
            base_sha256=base_digest,
            proposed_text=proposed,
            proposed_sha256=sha256_hex(encoded),
        )

    def _write_limit(self, tool: str, base_text: str | None) -> int:
        """`max_write_bytes` for the whole file, except that an edit of a file already over it
        (one read by lines) may grow the file by up to `max_write_bytes`."""
        limit = self.policy.max_write_bytes
        if tool == "edit_file" and base_text is not None:
            base_size = len(base_text.encode("utf-8"))
            if base_size > limit:
                return min(base_size + limit, self.policy.max_ranged_file_bytes)
        return limit

    def _propose_command(self, action: ToolAction, tool_call_id: str) -> CommandProposal:
        argv = action.arguments.get("argv")
        if not isinstance(argv, list) or not tools.is_argv(argv):
            raise AgentError(tools.ARGV_RULE)
        if tuple(argv) not in self.policy.allowed_commands:
            raise AgentError("command is not allowed")
        return CommandProposal(
            tool_call_id=tool_call_id,
            action=action,
            argv=tuple(argv),
            cwd=str(self.policy.root),
            timeout_seconds=float(self.policy.command_timeout_seconds),
        )

    def _approved(self, proposal: ToolProposal) -> bool:
        if self.confirm_proposal is not None:
            return self.confirm_proposal(proposal) is True
        if self.confirm_tool is not None:
            return self.confirm_tool(proposal.action) is True
        return False

    def _perform_approved(self, proposal: ToolProposal) -> str:
        if not self._approved(proposal):
            raise AgentError("operator denied the tool action")
        if isinstance(proposal, CommandProposal):
            return self._run_command(proposal)
        return self._write_proposal(proposal)

    def _write_proposal(self, proposal: EditProposal) -> str:
        """Replace the file with exactly the approved bytes, if the disk still holds the base."""
        data = proposal.proposed_text.encode("utf-8")
        if sha256_hex(data) != proposal.proposed_sha256:
            raise AgentError("proposed bytes do not match the approved digest")
        parts = PurePosixPath(proposal.path).parts
        with open_directory(self.policy.root, parts[:-1]) as directory:
            mode = entry_mode(directory, parts[-1])
            if proposal.base_sha256 is None:
                if mode is not None:
                    raise AgentError("file changed since it was read")
            else:
                if mode is None or not stat.S_ISREG(mode):
                    raise AgentError("file changed since it was read")
                current = read_regular_file(directory, parts[-1], self.policy.max_ranged_file_bytes)
                if sha256_hex(current) != proposal.base_sha256:
                    raise AgentError("file changed since it was read")
            replace_file(directory, parts[-1], data, mode)
        self._read_digests[proposal.path] = sha256_hex(data)
        self._modified.add(proposal.path)
        verb = "edited" if proposal.action.tool == "edit_file" else "wrote"
        result = f"{verb} {proposal.path}"
        self._record(proposal, "ok", result, (proposal.path,))
        return result

    def _run_command(self, proposal: CommandProposal) -> str:
        try:
            outcome = run_bounded(
                proposal.argv, self.policy.root, self.policy.command_timeout_seconds
            )
        except OSError as error:
            raise AgentError(f"could not run command: {error}") from None
        result = outcome.observation()
        self._record(proposal, "ok" if outcome.status == 0 else "error", result, ())
        return result

    def _record(
        self, proposal: ToolProposal, exit_state: str, result: str, artifacts: tuple[str, ...]
    ) -> None:
        receipt = EffectReceipt(
            tool_call_id=proposal.tool_call_id,
            tool=proposal.action.tool,
            arguments=dict(proposal.action.arguments),
            exit_state=exit_state,
            result=result,
            changed_artifacts=artifacts,
        )
        self.receipt_store.put(receipt)

    # The gate

    def _allocate_id(self) -> str:
        with self._call_ids:
            while self.receipt_store.get(f"call-{self._next_call}") is not None:
                self._next_call += 1
            tool_call_id = f"call-{self._next_call}"
            self._next_call += 1
            return tool_call_id

    def execute(self, action: Any, tool_call_id: str | None = None) -> str:
        """Run one model action; every refusal comes back as an `error: …` observation."""
        try:
            return self._execute(action, tool_call_id)
        except AgentError as error:
            return f"error: {error}"
        except OSError as error:
            return f"error: {error.strerror or error}"
        except Exception as error:  # noqa: BLE001 - the gate never raises for model input
            return f"error: {type(error).__name__}: {error}"

    def _execute(self, action: Any, tool_call_id: str | None) -> str:
        if not isinstance(action, ToolAction):
            raise AgentError("action must be a tool call")
        if action.tool not in self.available_tools:
            raise AgentError(f"tool is not enabled: {action.tool}")
        if not isinstance(action.arguments, dict):
            raise AgentError("arguments must be an object")
        check_arguments(action.tool, action.arguments)
        if action.tool == "list_files":
            return self.list_files(action.arguments.get("path", "."))
        if action.tool == "read_file":
            return self.read_file(
                action.arguments["path"],
                action.arguments.get("start_line"),
                action.arguments.get("end_line"),
            )
        if action.tool == "search_files":
            return self.search_files(
                action.arguments["pattern"],
                action.arguments.get("path", "."),
                action.arguments.get("literal", False),
            )
        assert action.tool in EFFECT_TOOLS
        if tool_call_id is None:
            tool_call_id = self._allocate_id()
        elif not isinstance(tool_call_id, str) or not tool_call_id:
            raise AgentError("tool call id must be a non-empty string")
        existing = self.receipt_store.get(tool_call_id)
        if existing is not None:
            if existing.tool == action.tool and existing.arguments == action.arguments:
                return existing.result
            raise AgentError("tool call id was already used for another action")
        return self._perform_approved(self.propose(action, tool_call_id))

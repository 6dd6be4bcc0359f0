"""The model-facing gate: every tool call is checked, approved by a person, done, and recorded."""

from __future__ import annotations

import errno
import os
import stat
import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from . import tools
from .actions import EFFECT_TOOLS, ToolAction, check_arguments
from .approval import Approval, denial
from .commands import CommandResult
from .edited_approval import diff_shows_all, edited_observation, edited_proposal
from .edits import apply_edit
from .errors import AgentError
from .files import (
    FileIdentity,
    directory_entries,
    entry_mode,
    file_identity,
    open_directory,
    read_regular_file,
    refuse_hard_links,
    remove_file,
    replace_file,
)
from .line_ranges import check_line_range, render_line_range
from .new_folders import folders_made, missing_folders, remove_folders
from .paths import (  # noqa: F401 - the path rules' long-standing home re-exports them
    MAX_PATH_CHARS,
    PROTECTED_NAMES,
    is_protected_name,
    is_protected_path,
    protected_walk_matcher,
    relative_parts,
)
from .policy import ToolPolicy
from .proposals import (
    ChangeSetProposal,
    CommandProposal,
    EditProposal,
    ToolProposal,
    sha256_hex,
)
from .receipt_evidence import approval_record, file_evidence, record_receipt
from .receipts import EffectReceipt, ReceiptNotRecorded, ReceiptStore
from .receipts.content import load_object
from .repropose import REPROPOSED_NOTE, can_repropose, reproposed
from .revert import DRIFT_ERROR, REVERT_TOOL, plan_revert
from .search import SearchLimits, search_tree
from .steps import StepResult
from .tree.command_run import run_tracked_command
from .tree.command_tree import CommandTree
from .tree.restore import apply_approved_change_set, propose_command_revert
from .tree.sandbox import OFF, sandbox_for
from .tree.snapshot import TreeLimits, TreeRules, guarded_paths
from .verdict import EffectOutcome, EffectState

ConfirmTool = Callable[[ToolAction], object]
ConfirmProposal = Callable[[ToolProposal], object]


class Workspace:
    """Tools confined to `policy.root`; effects need approval and leave a receipt."""

    def __init__(
        self,
        policy: ToolPolicy,
        confirm_tool: ConfirmTool | None = None,
        receipt_store: ReceiptStore | None = None,
        *,
        confirm_proposal: ConfirmProposal | None = None,
        stop_commands: threading.Event | None = None,
        run_id: str | None = None,
        approval_via: str = "cli",
        read_digests: dict[str, str] | None = None,
    ) -> None:
        self.policy = policy
        self.stop_commands = stop_commands  # set: a running command is ended and receipted
        self.confirm_tool = confirm_tool
        self.confirm_proposal = confirm_proposal
        self.receipt_store = receipt_store if receipt_store is not None else ReceiptStore()
        self._read_digests: dict[str, str] = dict(read_digests or {})  # a follow-up's earlier reads
        self._modified: set[str] = set()
        self._outcomes: list[EffectOutcome] = []
        self._step_effect: EffectOutcome | None = None  # what the current step's effect became
        self._step_receipt: EffectReceipt | None = None
        self._call_ids = threading.Lock()
        self.run_id = run_id or uuid.uuid4().hex
        self.approval_via = approval_via
        self.unrecorded_effect: str | None = None
        # Called with an approved proposal and its approval evidence just before the effect;
        # raising stops the effect (a durable intent, see counterfoil.sessions.intents).
        self.before_effect: Callable[[ToolProposal, dict[str, Any]], None] | None = None
        self.last_step: StepResult | None = None  # the record of the last `execute`
        self.search_limits = SearchLimits()
        self.search_engine = "auto"  # or "ripgrep" / "python", to pin one engine
        self.tree_limits = TreeLimits()
        self._tree: CommandTree | None = None

    @property
    def available_tools(self) -> frozenset[str]:
        return tools.enabled_tools(
            self.policy.allow_writes, self.policy.allowed_commands, self.policy.allow_search
        )

    @property
    def modified_files(self) -> tuple[str, ...]:
        return tuple(sorted(self._modified))

    @property
    def read_digests(self) -> dict[str, str]:
        """The files the model has read (or written) and their digests, for a follow-up."""
        return dict(self._read_digests)

    @property
    def effect_outcomes(self) -> tuple[EffectOutcome, ...]:
        """What became of each effect call so far, in order (the run verdict reads this)."""
        return tuple(self._outcomes)

    def _note(
        self, proposal: ToolProposal, state: EffectState, reason: str | None = None, **facts: Any
    ) -> None:
        if isinstance(proposal, CommandProposal):
            subject: dict[str, Any] = {"argv": proposal.argv}
        elif isinstance(proposal, ChangeSetProposal):
            subject = {}
        else:
            subject = {"path": proposal.path}
        self._noted(
            EffectOutcome(
                proposal.tool_call_id,
                proposal.action.tool,
                state,
                reason=reason,
                **subject,
                **facts,
            )
        )

    def _noted(self, outcome: EffectOutcome) -> None:
        self._outcomes.append(outcome)
        self._step_effect = outcome

    def _note_failure(self, proposal: ToolProposal, error: BaseException) -> None:
        """An approved effect that did not complete; one already done keeps what it did."""
        reason = str(error) if isinstance(error, AgentError) else f"{error}"
        last = self._outcomes[-1] if self._outcomes else None
        if last is not None and last.call_id == proposal.tool_call_id and last.state == "approved":
            self._outcomes[-1] = self._step_effect = replace(last, state="failed", reason=reason)
        else:
            self._note(proposal, "failed", reason)

    # Paths

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

    # Reads

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
        new_folders = missing_folders(self.policy.root, relative, self.policy.create_parent_folders)
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
            proposed = apply_edit(base_text, old, new)
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
            new_folders=new_folders,
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
        if self.policy.command_sandbox != OFF:  # refused before asking when it cannot be had
            sandbox_for(self.policy.command_sandbox, self.policy.root, network=False)
        return CommandProposal(
            tool_call_id=tool_call_id,
            action=action,
            argv=tuple(argv),
            cwd=str(self.policy.root),
            timeout_seconds=float(self.policy.command_timeout_seconds),
        )

    def _approval(self, proposal: ToolProposal) -> Approval:
        if self.confirm_proposal is not None:
            return Approval.of(self.confirm_proposal(proposal))
        if self.confirm_tool is not None:
            return Approval.of(self.confirm_tool(proposal.action))
        return Approval(False)

    def _perform_approved(self, proposal: ToolProposal) -> str:
        approval, note = self._approval(proposal), ""
        while approval.repropose and can_repropose(proposal):
            proposal, note = self._reproposed(proposal), REPROPOSED_NOTE
            approval = self._approval(proposal)
        if not approval.approved:
            self._note(proposal, "rejected", approval.reason)
            raise AgentError(denial(approval.reason))
        shown: EditProposal | None = None
        if approval.text is not None:
            edited = self._edited(proposal, approval.text)
            if edited is not None:
                assert isinstance(proposal, EditProposal)  # _edited refuses anything else
                shown, proposal = proposal, edited
        try:
            if self.before_effect is not None:
                self.before_effect(proposal, self._approval_evidence(proposal, shown))
            self.receipt_store.check_writable()
            if isinstance(proposal, CommandProposal):
                return self._run_command(proposal)
            if isinstance(proposal, ChangeSetProposal):
                return self._apply_change_set(proposal)
            self._keep_file_bytes(proposal)
            if shown is not None:
                self.receipt_store.keep_object(shown.proposed_text.encode("utf-8"))
            if proposal.reverts is not None:
                return self._apply_revert(proposal)
            return self._write_proposal(proposal, shown) + note
        except Exception as error:
            self._note_failure(proposal, error)
            raise

    def _reproposed(self, proposal: ToolProposal) -> EditProposal:
        """The edit again on the file's bytes now, or a No that says why it cannot be."""
        assert isinstance(proposal, EditProposal)  # can_repropose allows edits only
        try:
            return reproposed(
                proposal, self._read_bytes(proposal.path, self.policy.max_ranged_file_bytes)
            )
        except AgentError as error:
            self._note(proposal, "rejected", str(error))
            raise AgentError(denial(str(error))) from None

    def _edited(self, proposal: ToolProposal, text: object) -> EditProposal | None:
        """The text the person approved in place of the proposal, checked like any write
        (None: it is the proposal itself); a text that fails the checks is refused."""
        try:
            if not isinstance(proposal, EditProposal) or proposal.reverts is not None:
                raise AgentError("an edited approval applies only to file edits")
            edited = edited_proposal(proposal, text, self.policy.max_write_bytes)
        except AgentError as error:
            self._note(proposal, "refused", str(error))
            raise
        return None if edited.proposed_sha256 == proposal.proposed_sha256 else edited

    def _write_proposal(self, proposal: EditProposal, shown: EditProposal | None = None) -> str:
        """Replace the file with exactly the approved bytes, if the disk still holds the base.

        `shown`: the model's proposal when the person approved other text (`proposal`)."""
        data = proposal.proposed_text.encode("utf-8")
        if sha256_hex(data) != proposal.proposed_sha256:
            raise AgentError("proposed bytes do not match the approved digest")
        parts = PurePosixPath(proposal.path).parts
        with (
            folders_made(self.policy.root, proposal.new_folders),
            open_directory(self.policy.root, parts[:-1]) as directory,
        ):
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
        self._note(proposal, "approved", sha256=proposal.proposed_sha256)
        self._read_digests[proposal.path] = sha256_hex(data)
        if shown is not None and not diff_shows_all(
            proposal.path, shown.proposed_text, proposal.proposed_text
        ):
            self._read_digests.pop(proposal.path)  # the model saw a cut diff, not the text
        self._modified.add(proposal.path)
        self.command_tree().note_effect(proposal.path)
        verb = "edited" if proposal.action.tool == "edit_file" else "wrote"
        result = f"{verb} {proposal.path}"
        if proposal.new_folders:
            result += f" (in new folders: {', '.join(proposal.new_folders)})"
        approval = self._approval_evidence(proposal, shown)
        if shown is not None:
            result = edited_observation(
                verb, proposal.path, proposal.base_text, shown.proposed_text, proposal.proposed_text
            )
        evidence = self._run_evidence(proposal, file_evidence(proposal), approval)
        self._record(proposal, "ok", result, evidence)
        return result

    def _approval_evidence(
        self, proposal: ToolProposal, shown: EditProposal | None = None
    ) -> dict[str, Any]:
        """Who approved what they were shown (`shown`: the model's proposal, when the person
        approved other text)."""
        approval = approval_record(shown or proposal, self.approval_via)
        if shown is not None and isinstance(proposal, EditProposal):
            approval.update(modified=True, approved_sha256=proposal.proposed_sha256)
        return approval

    def revert(self, call_id: str, tool_call_id: str | None = None) -> str:
        """Put back the bytes a file effect's receipt says were there before it (or remove the
        file it created), or every file a command changed that still holds what the command
        left: an effect like any other, proposed, approved, digest-checked and recorded with
        `reverts`. Raises AgentError when it cannot be done or is denied."""
        proposal = self._propose_revert(call_id, tool_call_id or self._allocate_id())
        return self._perform_approved(proposal)

    def _propose_revert(self, call_id: str, tool_call_id: str) -> ToolProposal:
        receipt = self.receipt_store.get(call_id)
        if receipt is not None and receipt.tool == "run_command":
            return self._propose_command_revert(call_id, tool_call_id, receipt.evidence)
        plan = plan_revert(receipt, call_id, self._stored_object)
        path = self.resolve_path(plan.path, must_exist=plan.expected_sha256 is not None)
        relative = self._relative(path)
        parts = PurePosixPath(relative).parts
        with open_directory(self.policy.root, parts[:-1]) as directory:
            current = self._current_bytes(directory, parts[-1])
        if (None if current is None else sha256_hex(current)) != plan.expected_sha256:
            raise AgentError(DRIFT_ERROR)
        try:
            base_text = None if current is None else current.decode("utf-8")
            restored = None if plan.restore is None else plan.restore.decode("utf-8")
        except UnicodeDecodeError:
            raise AgentError("file is not valid UTF-8") from None
        return EditProposal(
            tool_call_id=tool_call_id,
            action=ToolAction(REVERT_TOOL, {"tool_call_id": call_id, "path": relative}),
            path=relative,
            base_text=base_text,
            base_sha256=plan.expected_sha256,
            proposed_text="" if restored is None else restored,
            proposed_sha256=plan.restore_sha256 or "",
            reverts=call_id,
            removes_file=restored is None,
            new_folders=plan.created_folders if restored is None else (),
        )

    def _propose_command_revert(
        self, call_id: str, tool_call_id: str, evidence: dict[str, Any]
    ) -> ChangeSetProposal:
        root, protected = self.policy.root, self.policy.protected_patterns
        plan = (call_id, tool_call_id, evidence.get("tree_changes"), self._stored_object)
        return propose_command_revert(*plan, root, protected, self._is_receipt_log)

    def _apply_change_set(self, proposal: ChangeSetProposal) -> str:
        """Put each file in its approved state if it still holds what was shown (see
        `tree/restore.py`), then note and receipt what was done."""
        done = apply_approved_change_set(proposal, self.policy.root, self.policy.protected_patterns)
        self._note(proposal, "approved", tree_changes=done.changed)
        for path, _ in done.changed:
            self._modified.add(path)
            self._read_digests.pop(path, None)
            self.command_tree().note_effect(path)
        evidence = self._run_evidence(proposal, done.evidence)
        artifacts = tuple(path for path, _ in done.changed)
        self._record(proposal, "ok", done.result, evidence, artifacts)
        return done.result

    def _stored_object(self, digest: str) -> bytes | None:
        log = self.receipt_store.path
        return None if log is None else load_object(log.parent, digest)

    def _current_bytes(self, directory: int, name: str) -> bytes | None:
        mode = entry_mode(directory, name)
        if mode is None:
            return None
        if not stat.S_ISREG(mode):
            raise AgentError("path is not a regular file")
        return read_regular_file(directory, name, self.policy.max_ranged_file_bytes)

    def _apply_revert(self, proposal: EditProposal) -> str:
        """Write the approved bytes back only if the file still holds what the receipt says."""
        parts = PurePosixPath(proposal.path).parts
        with open_directory(self.policy.root, parts[:-1]) as directory:
            current = self._current_bytes(directory, parts[-1])
            if (None if current is None else sha256_hex(current)) != proposal.base_sha256:
                raise AgentError(DRIFT_ERROR)
            if proposal.removes_file:
                remove_file(directory, parts[-1])
            else:
                mode = entry_mode(directory, parts[-1])
                replace_file(directory, parts[-1], proposal.proposed_text.encode("utf-8"), mode)
        self._note(proposal, "approved", sha256=proposal.proposed_sha256)
        self._read_digests.pop(proposal.path, None)
        self._modified.add(proposal.path)
        self.command_tree().note_effect(proposal.path)
        verb = "removed" if proposal.removes_file else "restored"
        result = f"{verb} {proposal.path} (reverts {proposal.reverts})"
        evidence = {**file_evidence(proposal), "reverts": proposal.reverts}
        if removed := remove_folders(self.policy.root, proposal.new_folders):
            result += f" and the folder{'s' if len(removed) > 1 else ''} {', '.join(removed)}"
            evidence["removed_folders"] = list(removed)
        evidence = self._run_evidence(proposal, evidence)
        self._record(proposal, "ok", result, evidence)
        return result

    def _keep_file_bytes(self, proposal: EditProposal) -> None:
        """The before and after bytes go to the content store before the file is touched."""
        if proposal.base_text is not None:
            self.receipt_store.keep_object(proposal.base_text.encode("utf-8"))
        if not proposal.removes_file:
            self.receipt_store.keep_object(proposal.proposed_text.encode("utf-8"))

    def command_tree(self) -> CommandTree:
        """The snapshots that say what each command changed (made on the first command)."""
        if self._tree is None:
            rules = TreeRules(
                self.policy.protected_patterns,
                self._is_receipt_log,
                guarded_paths(self.policy.root, self.receipt_store.own_paths(with_folder=True)),
            )
            self._tree = CommandTree(self.policy.root, rules, self.receipt_store, self.tree_limits)
        return self._tree

    def _run_command(self, proposal: CommandProposal) -> str:
        def ran(outcome: CommandResult, changed: tuple[tuple[str, str | None], ...]) -> None:
            self._note(
                proposal,
                "approved",
                exit_status=outcome.status,
                timed_out=outcome.timed_out,
                tree_changes=changed,
            )

        run = run_tracked_command(
            proposal,
            self.policy,
            self.receipt_store,
            self.command_tree(),
            stop=self.stop_commands,
            ask=self._approval,
            load_object=self._stored_object,
            ran=ran,
        )
        exit_state = "ok" if run.outcome.status == 0 else "error"
        evidence = self._run_evidence(proposal, run.evidence)
        self._record(proposal, exit_state, run.observation, evidence)
        return run.observation

    def _run_evidence(
        self,
        proposal: ToolProposal,
        evidence: dict[str, Any],
        approval: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An effect's evidence with this run's id and who approved it, as its receipt records
        them (recording may fail; then the run must stop and say so)."""
        return {
            "run_id": self.run_id,
            **evidence,
            "approval": approval or approval_record(proposal, self.approval_via),
        }

    # The gate

    def _allocate_id(self) -> str:
        """A call id no run and no process on this log has used, even for refused calls."""
        with self._call_ids:
            return self.receipt_store.reserve_call_id()

    def execute(self, action: Any, tool_call_id: str | None = None) -> str:
        """Run one model action; every refusal comes back as an `error: …` observation."""
        return self.execute_step(action, tool_call_id).observation

    def execute_step(self, action: Any, tool_call_id: str | None = None) -> StepResult:
        """`execute`, with the record of what the step did beside its observation."""
        self.last_step = self._step(lambda: self._execute(action, tool_call_id))
        return self.last_step

    def revert_step(self, call_id: str) -> StepResult:
        """`revert`, as a step: a refusal or a No is its observation, not an exception."""
        return self._step(lambda: self.revert(call_id))

    def _step(self, perform: Callable[[], str]) -> StepResult:
        self._step_effect = self._step_receipt = None
        refused = True
        try:
            observation = perform()
            refused = False
        except ReceiptNotRecorded as error:
            self.unrecorded_effect = str(error)
            observation = f"error: {error}"
        except AgentError as error:
            observation = f"error: {error}"
        except OSError as error:
            observation = f"error: {error.strerror or error}"
        except Exception as error:  # noqa: BLE001 - the gate never raises for model input
            observation = f"error: {type(error).__name__}: {error}"
        effect, receipt = self._step_effect, self._step_receipt
        evidence: dict[str, Any] = receipt.evidence if receipt is not None else {}
        call_id = receipt.tool_call_id if receipt is not None else None
        return StepResult(
            observation,
            call_id=effect.call_id if effect is not None else call_id,
            state=effect.state if effect is not None else "refused" if refused else None,
            effect=effect,
            receipt_id=None if receipt is None else receipt.receipt_id,
            output_sha256=evidence.get("output_sha256"),
            result_sha256=evidence.get("result_sha256"),
        )

    def _record(
        self,
        proposal: ToolProposal,
        exit_state: str,
        result: str,
        evidence: dict[str, Any],
        artifacts: tuple[str, ...] | None = None,
    ) -> None:
        self._step_receipt = record_receipt(
            self.receipt_store, proposal, exit_state, result, evidence, artifacts
        )

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
                self._step_receipt = existing
                return existing.result
            raise AgentError("tool call id was already used for another action")
        try:
            proposal = self.propose(action, tool_call_id)
        except AgentError as error:
            self._noted(
                EffectOutcome(
                    tool_call_id,
                    action.tool,
                    "refused",
                    reason=str(error),
                    path=_text_or_none(action.arguments.get("path")),
                    argv=_argv_or_none(action.arguments.get("argv")),
                )
            )
            raise
        return self._perform_approved(proposal)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _argv_or_none(value: object) -> tuple[str, ...] | None:
    return tuple(value) if isinstance(value, list) else None

"""The workspace's file effects: proposing a write or an edit over bytes the model has read,
writing exactly the approved bytes, and putting back what a file effect's receipt says was
there before; each is noted and receipted in the workspace's record and returns its own
(`CallRecord`)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePosixPath

from ..actions import ToolAction
from ..errors import AgentError, DetailedRefusal
from ..files.files import entry_mode, open_directory, read_regular_file, remove_file, replace_file
from ..files.path_text import shown_path
from ..proposals import EditProposal, sha256_hex
from ..receipt_evidence import file_evidence
from ..receipts import EffectReceipt
from ..step_facts import AlreadyHolds, ReadFirst
from ..tools import EDIT_FORMS
from .call_record import CallRecord
from .change_checks import checked_change
from .edited_approval import diff_shows_all, edited_observation
from .edits import apply_edit
from .new_folders import folders_made, missing_folders, remove_folders
from .patches import patch_edit
from .policy import ToolPolicy
from .revert import DRIFT_ERROR, REVERT_TOOL, plan_revert
from .syntax import same_meaning, syntax_problem
from .workspace_paths import Resolve, WorkspacePaths
from .workspace_record import WorkspaceRecord

READ_FIRST = "read the existing file before changing it"
PART_EDITS = ("edit_file", "patch_file")  # the tools that change part of an existing file


class FileEffects:
    """Writes, edits and reverts of single files under the root."""

    def __init__(
        self,
        paths: WorkspacePaths,
        record: WorkspaceRecord,
        resolve: Resolve,
        note_effect: Callable[[str], None],
    ) -> None:
        self.paths = paths
        self.record = record
        self.resolve = resolve
        self.note_effect = note_effect  # a path changed outside any command (for its snapshots)

    @property
    def policy(self) -> ToolPolicy:
        return self.paths.policy

    def propose(self, action: ToolAction, tool_call_id: str) -> EditProposal:
        if not self.policy.allow_writes:
            raise AgentError("writes are not enabled")
        arguments = action.arguments
        path = self.resolve(arguments["path"], must_exist=action.tool in PART_EDITS)
        relative = self.paths.relative(path)
        if not self.policy.editable(relative):
            allowed = ", ".join(self.policy.editable_paths or ()) or "nothing"
            raise AgentError(
                f"not editable: {relative}; this task allows changes only to: {allowed}"
            )
        new_folders = missing_folders(self.policy.root, relative, self.policy.create_parent_folders)
        exists = os.path.lexists(path)
        if exists and not stat.S_ISREG(os.lstat(path).st_mode):
            raise AgentError("path is not a regular file")
        if action.tool == "edit_file" and arguments["old"] == arguments["new"]:
            # Said before the read is asked for: whatever the file holds, this changes nothing.
            raise AgentError(f"nothing to write: {relative}: old and new are the same text")
        base_text: str | None = None
        base_digest: str | None = None
        if exists:
            recorded = self.record.seen.get(relative)
            if recorded is None:
                raise DetailedRefusal(READ_FIRST, ReadFirst(relative))
            data = self.paths.read_bytes(relative, self.policy.max_ranged_file_bytes)
            if sha256_hex(data) != recorded:
                raise AgentError("file changed since it was read")
            base_text = data.decode("utf-8")
            base_digest = recorded
        if action.tool in PART_EDITS and base_text is None:
            raise AgentError("path is not accessible")
        asked_as = action.tool
        if action.tool == "patch_file" and base_text is not None:
            # The hunk is read as the exact edit it makes: that edit is asked and receipted.
            old, new = patch_edit(base_text, arguments["diff"], relative)
            arguments = {"path": arguments["path"], "old": old, "new": new}
            action = ToolAction("edit_file", arguments)
        if action.tool == "edit_file" and base_text is not None:
            proposed = apply_edit(base_text, arguments["old"], arguments["new"], relative)
        else:
            proposed = arguments["content"]
        try:
            proposed.encode("utf-8")
        except UnicodeEncodeError:
            raise AgentError("content must be valid Unicode text") from None
        rejoin = checked_change(
            action,
            relative,
            base_text,
            proposed,
            self.policy.parsed_files,
            EDIT_FORMS[self.policy.edit_form],
            asked_as,
        )
        if rejoin is not None:  # the widened edit is the one asked, written and receipted
            action = ToolAction(action.tool, {**arguments, "old": rejoin.old})
            proposed = rejoin.text
        encoded = proposed.encode("utf-8")
        write_limit = self._write_limit(action.tool, base_text)
        if len(encoded) > write_limit:
            raise AgentError(f"write exceeds {write_limit} bytes")
        proposed_digest = sha256_hex(encoded)
        if proposed_digest == base_digest:  # nothing to ask, write or receipt
            holds = AlreadyHolds(relative, by_run=relative in self.record.modified)
            raise DetailedRefusal(
                f"nothing to write: {relative} already holds exactly these bytes", holds
            )
        return EditProposal(
            tool_call_id=tool_call_id,
            action=action,
            path=relative,
            base_text=base_text,
            base_sha256=base_digest,
            proposed_text=proposed,
            proposed_sha256=proposed_digest,
            new_folders=new_folders,
            rejoined_through=None if rejoin is None else rejoin.through_line,
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

    def write(self, proposal: EditProposal, shown: EditProposal | None = None) -> CallRecord:
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
        outcome = self.record.note(proposal, "approved", sha256=proposal.proposed_sha256)
        self.record.seen[proposal.path] = sha256_hex(data)
        if shown is not None and not diff_shows_all(
            proposal.path, shown.proposed_text, proposal.proposed_text
        ):
            self.record.seen.pop(proposal.path)  # the model saw a cut diff, not the text
        self.record.modified.add(proposal.path)
        parsed = self.policy.parsed_files
        syntax = syntax_problem(proposal.path, proposal.proposed_text, proposal.base_text, parsed)
        same = same_meaning(proposal.path, proposal.proposed_text, proposal.base_text, parsed)
        self.note_effect(proposal.path)
        verb = "edited" if proposal.action.tool == "edit_file" else "wrote"
        result = f"{verb} {shown_path(proposal.path)}"
        if proposal.new_folders:
            result += f" (in new folders: {', '.join(proposal.new_folders)})"
        if proposal.rejoined_through is not None:
            result += (
                f" (your new text ran on past your old text as the file has it: the edit "
                f"replaced through line {proposal.rejoined_through})"
            )
        approval = self.record.approval_evidence(proposal, shown)
        if shown is not None:
            result = edited_observation(
                verb, proposal.path, proposal.base_text, shown.proposed_text, proposal.proposed_text
            )
        evidence = self.record.run_evidence(proposal, file_evidence(proposal), approval)
        receipt = self.record.receipt(proposal, "ok", result, evidence)
        return CallRecord(result, outcome, receipt, syntax=syntax, same=same)

    def propose_revert(
        self, receipt: EffectReceipt | None, call_id: str, tool_call_id: str
    ) -> EditProposal:
        """Put back the bytes a file effect's `receipt` says were there before it (or remove
        the file it created), if the file still holds what the effect left."""
        plan = plan_revert(receipt, call_id, self.record.stored_object)
        path = self.resolve(plan.path, must_exist=plan.expected_sha256 is not None)
        relative = self.paths.relative(path)
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

    def _current_bytes(self, directory: int, name: str) -> bytes | None:
        mode = entry_mode(directory, name)
        if mode is None:
            return None
        if not stat.S_ISREG(mode):
            raise AgentError("path is not a regular file")
        return read_regular_file(directory, name, self.policy.max_ranged_file_bytes)

    def apply_revert(self, proposal: EditProposal) -> CallRecord:
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
        outcome = self.record.note(proposal, "approved", sha256=proposal.proposed_sha256)
        self.record.seen.pop(proposal.path, None)
        self.record.modified.add(proposal.path)
        self.note_effect(proposal.path)
        verb = "removed" if proposal.removes_file else "restored"
        result = f"{verb} {shown_path(proposal.path)} (reverts {proposal.reverts})"
        removed = remove_folders(self.policy.root, proposal.new_folders)
        if removed:
            result += f" and the folder{'s' if len(removed) > 1 else ''} {', '.join(removed)}"
        evidence = replace(
            file_evidence(proposal),
            reverts=proposal.reverts,
            removed_folders=tuple(removed) or None,
        )
        evidence = self.record.run_evidence(proposal, evidence)
        return CallRecord(result, outcome, self.record.receipt(proposal, "ok", result, evidence))

    def keep_bytes(self, proposal: EditProposal) -> None:
        """The before and after bytes go to the content store before the file is touched."""
        store = self.record.receipt_store
        if proposal.base_text is not None:
            store.keep_object(proposal.base_text.encode("utf-8"))
        if not proposal.removes_file:
            store.keep_object(proposal.proposed_text.encode("utf-8"))

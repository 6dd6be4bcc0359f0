"""The model-facing gate: every tool call is checked, approved by a person, done, and recorded."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from .. import tools
from ..actions import EFFECT_TOOLS, ToolAction, check_arguments
from ..commands.runner import CommandResult
from ..commands.tree.command_run import run_tracked_command
from ..commands.tree.command_tree import CommandTree
from ..commands.tree.restore import (
    applied_record,
    apply_approved_change_set,
    propose_command_revert,
)
from ..commands.tree.sandbox import OFF, sandbox_for
from ..commands.tree.snapshot import TreeRules, guarded_paths
from ..errors import AgentError
from ..receipt_evidence import file_evidence
from ..receipts import ReceiptNotRecorded
from ..receipts.content import load_object
from ..receipts.own_folder import own_folder
from ..steps import StepResult
from ..verdict import EffectOutcome
from .approval import Approval, denial
from .edited_approval import diff_shows_all, edited_observation, edited_proposal
from .edits import apply_edit
from .files import (
    entry_mode,
    open_directory,
    read_regular_file,
    remove_file,
    replace_file,
)
from .new_folders import folders_made, missing_folders, remove_folders
from .path_text import shown_path
from .paths import (  # noqa: F401 - the path rules' long-standing home re-exports them
    MAX_PATH_CHARS,
    PROTECTED_NAMES,
    is_protected_name,
    is_protected_path,
    relative_parts,
)
from .proposals import (
    ChangeSetProposal,
    CommandProposal,
    EditProposal,
    ToolProposal,
    sha256_hex,
)
from .repropose import REPROPOSED_NOTE, can_repropose, reproposed
from .revert import DRIFT_ERROR, REVERT_TOOL, plan_revert
from .workspace_reads import WorkspaceReads
from .workspace_record import ConfirmProposal, ConfirmTool  # noqa: F401 - re-exported


class Workspace(WorkspaceReads):
    """Tools confined to `policy.root`; effects need approval and leave a receipt."""

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
        proposed_digest = sha256_hex(encoded)
        if proposed_digest == base_digest:  # nothing to ask, write or receipt
            raise AgentError(f"nothing to write: {relative} already holds exactly these bytes")
        return EditProposal(
            tool_call_id=tool_call_id,
            action=action,
            path=relative,
            base_text=base_text,
            base_sha256=base_digest,
            proposed_text=proposed,
            proposed_sha256=proposed_digest,
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
        result = f"{verb} {shown_path(proposal.path)}"
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
        plan = (call_id, tool_call_id, applied_record(evidence), self._stored_object)
        return propose_command_revert(*plan, root, protected, self._is_receipt_log)

    def _apply_change_set(self, proposal: ChangeSetProposal) -> str:
        """Put each file in its approved state if it still holds what was shown (see
        `commands/tree/restore.py`), then note and receipt what was done."""
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
        return None if log is None else load_object(own_folder(log), digest)

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
        result = f"{verb} {shown_path(proposal.path)} (reverts {proposal.reverts})"
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
        def ran(
            outcome: CommandResult, changed: tuple[tuple[str, str | None], ...], review: str | None
        ) -> None:
            self._note(
                proposal,
                "approved",
                exit_status=outcome.status,
                timed_out=outcome.timed_out,
                tree_changes=changed,
                review=review,
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

    # The gate

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

    def _execute(self, action: Any, tool_call_id: str | None) -> str:
        if not isinstance(action, ToolAction):
            raise AgentError("action must be a tool call")
        if action.tool not in self.available_tools:
            raise AgentError(f"tool is not enabled: {action.tool}")
        if not isinstance(action.arguments, dict):
            raise AgentError("arguments must be an object")
        check_arguments(action.tool, action.arguments)
        tool = tools.tool_named(action.tool)
        assert tool is not None
        if tool.handler is not None:
            handler: Callable[..., str] = getattr(self, tool.handler)
            return handler(
                *(action.arguments.get(item.name, item.default) for item in tool.arguments)
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

"""Writing a real run's checkpoint as it goes: at each complete observation, when an approval
is asked (with the approval open), before each approved effect (its intent), and at the end.

The recorder holds the run's lock for as long as the run goes, so a listing can tell a live
run from an interrupted one and a second resume is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..actions import ToolAction
from ..context.budget import Observation
from ..gate.workspace import Workspace
from ..model import ConfiguresTools, McpListings, ModelReply, configure, model_reply
from ..model_state import ModelCheckpoint
from ..proposals import McpProposal, ToolProposal
from ..receipt_evidence import utc_now
from ..receipt_fields import ApprovalRecord
from ..verdict import EffectOutcome, compute_verdict
from ..workspace_view import WorkspaceView
from .checkpoint import (
    KeepsPromptCache,
    SavesCheckpoints,
    create_checkpoint,
    prompt_cache_name,
    save_model_state,
)
from .decisions import DecisionLog, outcome_entry
from .intents import intent_of, mcp_intent_of
from .record import LogPosition, PendingCall, SessionRecord
from .store import RunLock, SessionStore

Asked = TypeVar("Asked", ToolProposal, McpProposal)  # what `confirming` records as open

Messages = list[dict[str, str]]
_STATES = ("approved", "rejected", "refused", "failed")
REVIEW_REJECTED_COUNT = "review rejected"  # commands whose reviewed changes were rejected
MAX_PROMPT_CACHE_BYTES = 512 << 20  # a bigger KV cache is not written at each boundary


class RememberingModel:
    """The model as the loop calls it, keeping its last response (the text of an approval
    still open when the run stops); the enabled tools still reach the model."""

    def __init__(self, generate: Callable[[Messages], str]) -> None:
        self.generate = generate
        self.last_response: str | None = None

    def __call__(self, messages: Messages) -> str:
        return self.reply(messages).text

    def reply(self, messages: Messages) -> ModelReply:
        self.last_response = None
        reply = model_reply(self.generate, messages)
        self.last_response = reply.text if isinstance(reply.text, str) else None
        return reply

    def configure_tools(
        self,
        available_tools: frozenset[str],
        allowed_commands: Sequence[Sequence[str]],
        mcp_tools: McpListings | None = None,
        view: WorkspaceView | None = None,
    ) -> None:
        if isinstance(self.generate, ConfiguresTools):
            configure(self.generate, available_tools, allowed_commands, mcp_tools, view)


class SessionRecorder:
    """The checkpoints of one run of `workspace`, under `sessions`."""

    def __init__(
        self,
        sessions: SessionStore,
        workspace: Workspace,
        task: str,
        messages: Messages,
        observations: list[Observation],
        *,
        lock: RunLock,
        started: str | None = None,
        stopping: Callable[[], bool] = lambda: False,
        max_prompt_cache_bytes: int = MAX_PROMPT_CACHE_BYTES,
    ) -> None:
        self.sessions = sessions
        self.workspace = workspace
        self.task = task
        self.messages = messages  # the loop extends it in place
        self.observations = observations
        self.lock = lock
        self.started = started or utc_now()
        self.model: object = None  # the model whose state is saved (not the printing wrapper)
        self.watched: RememberingModel | None = None
        self.stopping = stopping  # True once the person stops: an open approval stays open
        self.last: SessionRecord | None = None
        self.decisions = DecisionLog(sessions, workspace.run_id)
        self._noted = 0  # the workspace's outcomes already in the decision log
        # Why a No was not the person's answer (the file went stale, the diff was closed, a
        # pause withdrew it), by call id: the decision is recorded under that word.
        self.cause_of: Callable[[str], str | None] = lambda call_id: None
        self._prompt_cache: str | None = None  # the KV cache file last written
        self._prompt_cache_sha256: str | None = None  # and its bytes' digest
        self.max_prompt_cache_bytes = max_prompt_cache_bytes

    def continue_run(self, earlier: Sequence[EffectOutcome]) -> None:
        """A resumed run: what its earlier parts decided counts in its verdict, and is in the
        decision log already."""
        self.workspace.restore_outcomes(earlier)
        self._noted += len(earlier)

    def watch(self, generate: Callable[[Messages], str], model: object) -> RememberingModel:
        self.model = model
        self.watched = RememberingModel(generate)
        return self.watched

    # The boundaries

    def at_observation(self, messages: Messages, action: ToolAction | None = None) -> None:
        if not self.stopping():
            self.write()

    def confirming(self, confirm: Callable[[Asked], object]) -> Callable[[Asked], object]:
        """`confirm`, after the checkpoint records the approval as open (an effect's or an MCP
        call's: a resumed run asks it again)."""

        def ask(proposal: Asked) -> object:
            response = self.watched.last_response if self.watched is not None else None
            pending = PendingCall(
                proposal.tool_call_id,
                proposal.action.tool,
                dict(proposal.action.arguments),
                response or _action_text(proposal.action),
            )
            self.write(pending)
            return confirm(proposal)

        return ask

    def write_intent(self, proposal: ToolProposal, approval: ApprovalRecord) -> None:
        root = self.workspace.policy.root
        intent = intent_of(proposal, approval, self.workspace.run_id, root)
        self.sessions.write_intent(self.workspace.run_id, proposal.tool_call_id, intent)

    def write_mcp_intent(self, proposal: McpProposal, approval: ApprovalRecord) -> None:
        root = self.workspace.policy.root
        intent = mcp_intent_of(proposal, approval, self.workspace.run_id, root)
        self.sessions.write_intent(self.workspace.run_id, proposal.tool_call_id, intent)

    def finish(self, state: str, reason: str | None) -> None:
        """The last write: `paused` keeps the run resumable, `ended` closes it."""
        record = self.last or self._record(None)
        self.sessions.write(record.with_state(state, reason, utc_now()))
        self._note_decisions(interrupted=record.pending if state == "paused" else None)
        outcomes = self.workspace.effect_outcomes
        verdict = compute_verdict(outcomes)
        counts = {name: sum(1 for item in outcomes if item.state == name) for name in _STATES}
        if verdict.review_rejected:
            counts[REVIEW_REJECTED_COUNT] = len(verdict.review_rejected)
        self.decisions.ended(state, reason, {"effects": counts, "validation": verdict.validation})
        self.lock.release()

    # The record

    def write(self, pending: PendingCall | None = None) -> None:
        self.last = self._record(pending)
        self.sessions.write(self.last)
        self._note_decisions()

    def _note_decisions(self, interrupted: PendingCall | None = None) -> None:
        """Each decision on a call since the last write; a No given by stopping at an open
        approval is recorded as interrupted (the approval stays open)."""
        new = self.workspace.effect_outcomes[self._noted :]
        self._noted += len(new)
        entries = []
        for outcome in new:
            if interrupted is not None and outcome.call_id == interrupted.call_id:
                entry = outcome_entry(outcome, "interrupted")
                entry["reason"] = "stopped while its approval was open"
            else:
                cause = self.cause_of(outcome.call_id) if outcome.state == "rejected" else None
                entry = outcome_entry(outcome, cause)
            entries.append(entry)
        if interrupted is not None and not any(o.call_id == interrupted.call_id for o in new):
            entries.append(self._left_open(interrupted))
        self.decisions.decided(entries)

    def _left_open(self, pending: PendingCall) -> dict[str, Any]:
        """The approval the run stopped at, never answered: `withdrawn` by a pause,
        `interrupted` when the editor went away; it stays open and is asked again on resume."""
        paused = self.cause_of(pending.call_id) == "paused"
        argv, path = pending.arguments.get("argv"), pending.arguments.get("path")
        entry: dict[str, Any] = {
            "kind": "decision",
            "call_id": pending.call_id,
            "tool": pending.tool,
            "state": "withdrawn" if paused else "interrupted",
            "reason": (
                "withdrawn by a pause before it was answered"
                if paused
                else "stopped while its approval was open"
            ),
        }
        if isinstance(path, str):
            entry["path"] = path
        if isinstance(argv, list):
            entry["argv"] = [str(item) for item in argv]
        return entry

    def _record(self, pending: PendingCall | None) -> SessionRecord:
        messages = self.messages
        restorable = isinstance(self.model, SavesCheckpoints)
        if restorable:
            state = save_model_state(self.model, messages)
        else:
            state = ModelCheckpoint(len(messages), 0, (), (0,))
        position = LogPosition.of_log(self._log_path)
        cache, note = self._keep_prompt_cache(state.cached_token_ids)
        digest = self._prompt_cache_sha256 if cache is not None else None
        return SessionRecord(
            run_id=self.workspace.run_id,
            root=str(self.workspace.policy.root),
            log=str(self._log_path),
            checkpoint=create_checkpoint(self.task, messages, state),
            started=self.started,
            updated=utc_now(),
            observations=tuple(dataclasses.replace(item) for item in self.observations),
            read_digests=self.workspace.read_digests,
            log_position=position,
            pending=pending,
            model_restorable=restorable,
            model_note=note,
            prompt_cache=cache,
            prompt_cache_sha256=digest,
        )

    def _keep_prompt_cache(self, tokens: tuple[int, ...]) -> tuple[str | None, str | None]:
        """The KV cache's file for `tokens` (written once per prefix), or why there is none."""
        model = self.model
        if not isinstance(model, KeepsPromptCache) or not tokens:
            return None, None
        name = prompt_cache_name(tokens)
        if name == self._prompt_cache:
            return name, None
        size = model.prompt_cache_bytes()
        if size > self.max_prompt_cache_bytes:
            self._prompt_cache = None
            return None, (
                f"prompt cache not kept: {size} bytes is over the limit of "
                f"{self.max_prompt_cache_bytes}; a resume prefills the conversation again"
            )
        self.sessions.write_prompt_cache(self.workspace.run_id, name, model.write_prompt_cache)
        self._prompt_cache = name
        self._prompt_cache_sha256 = self.sessions.file_sha256(self.workspace.run_id, name)
        return name, None

    @property
    def _log_path(self) -> Path:
        return self.sessions.log_path


def _action_text(action: ToolAction) -> str:
    from ..actions import action_to_json

    return action_to_json(action)

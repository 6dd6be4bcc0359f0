"""One run that keeps its session on disk, new or resumed, as the terminal and the daemon run it.

Both adapters drive the one loop with the same recorder: `attach` takes the run's lock and
starts its record, `begin` starts the conversation (or restores the model, asks an open
approval again as a new proposal, tells the model what changed and adds the steering, each
once), `loop_arguments` hands the loop its messages and boundary, `finish` writes the last
checkpoint. What the person should hear goes to `say`, a line at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..actions import ToolAction
from ..context.budget import Observation, note_observation
from ..context.prompt import build_system_prompt
from ..gate.workspace import Workspace
from ..gate.workspace_setup import WorkspaceSetup
from ..loop import Messages, continue_conversation, initial_messages
from ..receipts import ReceiptStore
from ..steps import StepResult
from ..verdict import EffectOutcome
from .checkpoint import (
    KeepsPromptCache,
    RestoresCheckpoints,
    prompt_cache_name,
    restore_model_state,
)
from .decisions import DECISIONS_FILE, model_record, read_entries, recorded_model, recorded_outcomes
from .intents import Settled
from .record import SessionRecord
from .recorder import Asked, SessionRecorder
from .reopen import ResumePlan, pending_action
from .steering import steering_message
from .store import SessionStore

Say = Callable[[str], object]


def read_prompt_cache(
    sessions: SessionStore, record: SessionRecord, model: object, say: Say
) -> None:
    """The KV cache saved with the checkpoint, if its file is there under its key."""
    tokens = record.checkpoint.model.cached_token_ids
    if record.model_note:
        say(f"note: {record.model_note}")
    if not isinstance(model, KeepsPromptCache) or record.prompt_cache is None:
        return
    if record.prompt_cache != prompt_cache_name(tokens):
        say("note: the saved prompt cache does not match its tokens; not used")
        return
    path = sessions.run_folder(record.run_id) / record.prompt_cache
    digest = sessions.file_sha256(record.run_id, record.prompt_cache)
    if digest is None:
        return
    if record.prompt_cache_sha256 is None or digest != record.prompt_cache_sha256:
        say("note: the saved prompt cache does not match its digest; not used")
        return
    model.read_prompt_cache(str(path), tokens)
    say(f"prompt cache: {len(tokens)} tokens restored")


@dataclass
class RecordedRun:
    """One run's session: new, a follow-up of a kept conversation, or resumed from `plan`."""

    sessions: SessionStore
    store: ReceiptStore
    plan: ResumePlan | None
    steer: str | None
    settled: list[Settled] = field(default_factory=list)
    say: Say = lambda line: None
    recorder: SessionRecorder | None = None
    messages: Messages = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    # The open approval a resume settled: the model's response, its action, the gate's record.
    asked_again: tuple[str, ToolAction, StepResult] | None = None
    model_spec: str | None = None  # the model this run (or this part of it) runs with

    @property
    def resuming(self) -> bool:
        return self.plan is not None

    @property
    def run_id(self) -> str | None:
        return None if self.plan is None else self.plan.record.run_id

    def recorded_model(self) -> str | None:
        """The model the resumed run last ran with, as its record says (None: new run, or
        a record that names none)."""
        if self.plan is None:
            return None
        path = self.sessions.run_folder(self.plan.record.run_id) / DECISIONS_FILE
        return recorded_model(read_entries(path))

    @property
    def steps_done(self) -> int:
        """The steps the run took before this part of it (0 for a new run)."""
        return 0 if self.plan is None else self.plan.record.steps

    @property
    def read_digests(self) -> dict[str, str] | None:
        return None if self.plan is None else self.plan.read_digests

    def kept(self, setup: WorkspaceSetup) -> WorkspaceSetup:
        """`setup` for the workspace of the run this session keeps: each proposal is asked
        after the checkpoint records it open, each effect's intent is written before it runs,
        and each receipt says a record of the run is kept (the recorder is attached before
        the loop, so before any of them)."""
        confirm = setup.confirm_proposal
        return replace(
            setup,
            confirm_proposal=None if confirm is None else self.confirming(confirm),
            before_effect=lambda proposal, approval: self._recorder.write_intent(
                proposal, approval
            ),
            before_mcp_call=lambda proposal, approval: self._recorder.write_mcp_intent(
                proposal, approval
            ),
            keeps_run_record=True,
        )

    def attach(
        self,
        workspace: Workspace,
        task: str,
        stopping: Callable[[], bool],
        *,
        continued: Messages | None = None,
        observations: list[Observation] | None = None,
    ) -> None:
        """Start recording `workspace`'s run (its lock is taken here for a new run);
        `continued`: a kept conversation that `task` follows up."""
        plan = self.plan
        lock = plan.lock if plan is not None else self.sessions.lock(workspace.run_id)
        if plan is not None:
            self.messages = plan.record.checkpoint.message_list()
            self.observations = list(plan.record.observations)
        elif continued is not None:
            self.messages = [dict(message) for message in continued]
            self.observations = list(observations or [])
        self.recorder = SessionRecorder(
            self.sessions,
            workspace,
            task,
            self.messages,
            self.observations,
            lock=lock,
            started=None if plan is None else plan.record.started,
            stopping=stopping,
        )

    def release(self) -> None:
        """Give the run's lock back when the run never got going (the model did not load)."""
        if self.recorder is not None:
            self.recorder.lock.release()
        elif self.plan is not None:
            self.plan.lock.release()

    def confirming(self, confirm: Callable[[Asked], object]) -> Callable[[Asked], object]:
        return lambda proposal: self._recorder.confirming(confirm)(proposal)

    def begin(self, model: object, workspace: Workspace, instructions: str | None = None) -> None:
        """Before the loop: start the conversation (the system prompt with the project's
        `instructions`), or restore the model, settle the open approval, tell the model what
        changed and add the steering, each once."""
        system_prompt = build_system_prompt(workspace, instructions)
        recorder = self._recorder
        recorder.model = model
        plan = self.plan
        recorder.decisions.started(
            recorder.task,
            workspace.approval_via,
            plan is not None,
            None if self.model_spec is None else model_record(self.model_spec),
            workspace.model_identity,
            workspace.approval_rules,
        )
        if plan is None:
            if self.messages:
                continue_conversation(self.messages, recorder.task, system_prompt)
            else:
                self.messages += initial_messages(recorder.task, system_prompt)
            recorder.write()
            return
        if self.steer is not None:
            recorder.decisions.steered(self.steer)
        record = plan.record
        run_receipts = [
            receipt
            for receipt in self.store.iter_receipts()
            if receipt.evidence.run_id == record.run_id
        ]
        recorder.continue_run(
            recorded_outcomes(read_entries(recorder.decisions.path), self.store.get, run_receipts)
        )
        if record.model_restorable and isinstance(model, RestoresCheckpoints):
            restore_model_state(model, record.checkpoint.model)
            self._read_prompt_cache(model)
        messages = self.messages
        if messages and messages[0].get("role") == "system":
            messages[0] = {"role": "system", "content": system_prompt}
        action = pending_action(record)
        if action is not None and record.pending is not None:
            step = self._pending_result(record.pending.call_id, action, workspace)
            if recorder.stopping():
                # Withdrawn again (a pause, a reload, Stop): the approval stays open in the
                # record as the confirm wrote it, and nothing of it reaches the conversation.
                return
            messages += [
                {"role": "assistant", "content": record.pending.response},
                {"role": "user", "content": "Tool result:\n" + step.observation},
            ]
            note_observation(self.observations, messages, action, step)
            self.asked_again = (record.pending.response, action, step)
            self.say(f"observation:\n{step.observation}")
        notice = plan.notice()
        if notice is not None:
            messages.append({"role": "user", "content": notice})
        if self.steer is not None:
            messages.append(steering_message(self.steer))
        recorder.write()

    def _read_prompt_cache(self, model: object) -> None:
        assert self.plan is not None
        read_prompt_cache(self.sessions, self.plan.record, model, self.say)

    def _pending_result(self, call_id: str, action: ToolAction, workspace: Workspace) -> StepResult:
        receipt = self.store.get(call_id)
        if receipt is not None:  # it ran, and was recorded or recovered from the disk
            return StepResult(receipt.result, call_id=call_id, receipt_id=receipt.receipt_id)
        for found in self.settled:
            if found.call_id == call_id and found.outcome == "unknown":
                return StepResult(found.observation, call_id=call_id, error=found.error)
        self.say(f"asking again for {call_id}, as a new proposal checked against the disk")
        # The record's latest word on the call is no longer its withdrawal: it is asked again.
        again: dict[str, Any] = {"kind": "decision", "call_id": call_id, "tool": action.tool}
        again.update(state="pending", reason="asked again when the run went on")
        for key in ("path", "argv"):
            if isinstance(action.arguments.get(key), (str, list)):
                again[key] = action.arguments[key]
        self._recorder.decisions.decided([again])
        step = workspace.execute_step(action, call_id)
        if self._recorder.stopping():
            return step  # withdrawn again: the call stays open, nothing is decided
        if not any(outcome.call_id == call_id for outcome in workspace.effect_outcomes):
            # Refused before it became a proposal (its tool is not enabled today, say): the
            # call id is still accounted for, as refused with the gate's sentence.
            argv = action.arguments.get("argv")
            path = action.arguments.get("path")
            workspace.note_outcome(
                EffectOutcome(
                    call_id,
                    action.tool,
                    "refused",
                    path=path if isinstance(path, str) else None,
                    argv=tuple(str(item) for item in argv) if isinstance(argv, list) else None,
                    reason=step.error,
                )
            )
        return step

    def watch(self, generate: Callable[[Messages], str]) -> Callable[[Messages], str]:
        return self._recorder.watch(generate, self._recorder.model)

    def loop_arguments(self) -> dict[str, Any]:
        """What `run_agent` continues: the session's messages, as they are when resumed."""
        return {
            "messages": self.messages,
            "observations": self.observations,
            "resume": True,  # `begin` started or restored them
            "on_observation": self._recorder.at_observation,
        }

    def finish(self, reason: str, interrupted: bool) -> None:
        """`interrupted`: the run stopped short and stays resumable (paused); else it ended."""
        self._recorder.finish("paused" if interrupted else "ended", reason)

    @property
    def _recorder(self) -> SessionRecorder:
        assert self.recorder is not None
        return self.recorder

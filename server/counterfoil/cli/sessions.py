"""`counterfoil sessions` and `counterfoil resume`, and the session every terminal run keeps.

A run writes its checkpoint beside the receipt log as it goes (see counterfoil.sessions);
`resume` checks it, prints where it stopped, asks an open approval again as a new proposal
and continues with the person's current flags. Every refusal is one sentence and exit 2.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ..context import Observation, note_observation
from ..loop import Messages, initial_messages
from ..prompt import build_system_prompt
from ..proposals import ToolProposal
from ..receipts import ReceiptStore
from ..sessions.checkpoint import (
    KeepsPromptCache,
    RestoresCheckpoints,
    prompt_cache_name,
    restore_model_state,
)
from ..sessions.intents import Settled, settle_intents
from ..sessions.record import CheckpointRefused, SessionRecord
from ..sessions.recorder import SessionRecorder
from ..sessions.reopen import ResumePlan, open_for_resume, pending_action, run_state, status_of
from ..sessions.steering import steering_message
from ..sessions.store import SessionStore, StoredRun
from ..workspace import Workspace
from .command_setup import CommandSetup
from .terminal import EXIT_SETUP_ERROR


def add_session_parsers(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    agent: argparse.ArgumentParser,
    receipt_log_help: str,
) -> None:
    sessions = commands.add_parser("sessions", help="list the runs that can be resumed")
    sessions.add_argument(
        "action",
        nargs="?",
        choices=("list", "gc"),
        default="list",
        help="gc: remove the checkpoints of ended runs",
    )
    sessions.add_argument("--root", required=True, type=Path, help="the project folder")
    sessions.add_argument("--receipt-log", dest="receiptLog", metavar="PATH", help=receipt_log_help)
    resume = commands.add_parser(
        "resume", help="continue an interrupted or paused run (default: the latest)"
    )
    resume.add_argument("run_id", nargs="?", metavar="RUN_ID", help="a run id from `sessions`")
    resume.add_argument("--steer", metavar="TEXT", help="one operator message before it continues")
    for action in agent._actions:
        if action.dest not in ("help", "goal"):
            resume._add_action(action)


@dataclass
class TerminalSession:
    """One terminal run's session: new, or resumed from `plan`."""

    sessions: SessionStore
    store: ReceiptStore
    plan: ResumePlan | None
    steer: str | None
    settled: list[Settled] = field(default_factory=list)
    recorder: SessionRecorder | None = None
    messages: Messages = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)

    @property
    def resuming(self) -> bool:
        return self.plan is not None

    @property
    def run_id(self) -> str | None:
        return None if self.plan is None else self.plan.record.run_id

    @property
    def read_digests(self) -> dict[str, str] | None:
        return None if self.plan is None else self.plan.read_digests

    def attach(self, workspace: Workspace, task: str, stopping: Callable[[], bool]) -> None:
        """Start recording `workspace`'s run (its lock is taken here for a new run)."""
        plan = self.plan
        lock = plan.lock if plan is not None else self.sessions.lock(workspace.run_id)
        if plan is not None:
            self.messages = plan.record.checkpoint.message_list()
            self.observations = list(plan.record.observations)
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

    def confirming(
        self, confirm: Callable[[ToolProposal], object]
    ) -> Callable[[ToolProposal], object]:
        return lambda proposal: self._recorder.confirming(confirm)(proposal)

    def begin(
        self,
        model: object,
        workspace: Workspace,
        stdout: TextIO,
        instructions: str | None = None,
    ) -> None:
        """Before the loop: start the conversation (the system prompt with the project's
        `instructions`), or restore the model, settle the open approval, tell the model what
        changed and add the steering, each once."""
        system_prompt = build_system_prompt(workspace, instructions)
        recorder = self._recorder
        recorder.model = model
        plan = self.plan
        recorder.decisions.started(recorder.task, workspace.approval_via, plan is not None)
        if plan is None:
            self.messages += initial_messages(recorder.task, system_prompt)
            recorder.write()
            return
        record = plan.record
        if record.model_restorable and isinstance(model, RestoresCheckpoints):
            restore_model_state(model, record.checkpoint.model)
            self._read_prompt_cache(model, stdout)
        messages = self.messages
        if messages and messages[0].get("role") == "system":
            messages[0] = {"role": "system", "content": system_prompt}
        action = pending_action(record)
        if action is not None and record.pending is not None:
            result = self._pending_result(record.pending.call_id, action, workspace, stdout)
            messages += [
                {"role": "assistant", "content": record.pending.response},
                {"role": "user", "content": "Tool result:\n" + result},
            ]
            note_observation(self.observations, messages, action, result)
            stdout.write(f"observation:\n{result}\n")
        notice = plan.notice()
        if notice is not None:
            messages.append({"role": "user", "content": notice})
        if self.steer is not None:
            messages.append(steering_message(self.steer))
        recorder.write()

    def _read_prompt_cache(self, model: object, stdout: TextIO) -> None:
        assert self.plan is not None
        read_prompt_cache(self.sessions, self.plan.record, model, stdout)

    def _pending_result(
        self, call_id: str, action: Any, workspace: Workspace, stdout: TextIO
    ) -> str:
        receipt = self.store.get(call_id)
        if receipt is not None:
            return receipt.result  # it ran, and was recorded or recovered from the disk
        for found in self.settled:
            if found.call_id == call_id and found.outcome == "unknown":
                return found.observation
        stdout.write(f"asking again for {call_id}, as a new proposal checked against the disk\n")
        return workspace.execute(action, call_id)

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
        self._recorder.finish("paused" if interrupted else "ended", reason)

    @property
    def _recorder(self) -> SessionRecorder:
        assert self.recorder is not None
        return self.recorder


def read_prompt_cache(
    sessions: SessionStore, record: SessionRecord, model: object, stdout: TextIO
) -> None:
    """The KV cache saved with the checkpoint, if its file is there under its key."""
    tokens = record.checkpoint.model.cached_token_ids
    if record.model_note:
        stdout.write(f"note: {record.model_note}\n")
    if not isinstance(model, KeepsPromptCache) or record.prompt_cache is None:
        return
    if record.prompt_cache != prompt_cache_name(tokens):
        stdout.write("note: the saved prompt cache does not match its tokens; not used\n")
        return
    path = sessions.run_folder(record.run_id) / record.prompt_cache
    if path.is_file():
        model.read_prompt_cache(str(path), tokens)
        stdout.write(f"prompt cache: {len(tokens)} tokens restored\n")


def open_terminal_session(
    args: argparse.Namespace, setup: CommandSetup, stdout: TextIO
) -> TerminalSession | None:
    """Settle what an interrupted run left, then (for `resume`) the checked checkpoint; None
    once the reason it cannot go on is written."""
    sessions = SessionStore(setup.log_path)
    try:
        settled = settle_intents(sessions, setup.store)
    except (CheckpointRefused, OSError) as error:
        stdout.write(f"error: could not settle an interrupted effect: {error}\n")
        return None
    stdout.writelines(f"recovered: {found.sentence}\n" for found in settled)
    plan = None
    if args.command == "resume":
        try:
            plan = open_for_resume(sessions, setup.policy.root, args.run_id)
        except CheckpointRefused as error:
            stdout.write(f"error: {error}\n")
            return None
        if args.steer is not None and not args.steer.strip():
            plan.lock.release()
            stdout.write("error: steering must not be empty\n")
            return None
        args.goal = plan.record.checkpoint.task
        status = status_of(plan.record)
        stdout.write(
            f"resuming run {plan.record.run_id} ({plan.record.steps} steps)\n"
            f"last action: {status.last_action}\nlast evidence: {status.last_evidence}\n"
            f"next step: {status.next_step}\n"
        )
        stdout.writelines(
            f"changed since it was read: {path} (the model is told)\n" for path in plan.changed
        )
    return TerminalSession(sessions, setup.store, plan, getattr(args, "steer", None), settled)


def sessions_command(args: argparse.Namespace, stdout: TextIO) -> int:
    from ..settings import Settings, SettingsError
    from .main import SETTING_FLAGS

    try:
        settings = Settings.from_mapping({"receiptLog": args.receiptLog}, names=SETTING_FLAGS)
        policy = settings.policy(args.root)
    except SettingsError as error:
        stdout.writelines(f"error: {problem}\n" for problem in error.problems)
        return EXIT_SETUP_ERROR
    except ValueError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    sessions = SessionStore(settings.receipt_log_path(policy.root))
    runs = sessions.runs()
    if args.action == "gc":
        return _collect(sessions, runs, stdout)
    if not runs:
        stdout.write(f"no runs recorded in {policy.root}\n")
        return 0
    stdout.writelines(describe_run(run) + "\n" for run in runs)
    return 0


def describe_run(run: StoredRun) -> str:
    """`<run id>  <state>  <time>  <steps> steps  last: <action>  goal: <goal>`."""
    when = datetime.fromtimestamp(run.modified, UTC).isoformat(timespec="seconds")
    state = run_state(run)
    record = run.record
    if record is None:
        return f"{run.run_id}  {state}  {when}  {run.problem}"
    status = status_of(record, evidence_chars=60)
    goal = record.checkpoint.task.splitlines()[0] if record.checkpoint.task else ""
    return (
        f"{run.run_id}  {state:<11} {when}  {record.steps} steps  "
        f"last: {status.last_action}  goal: {goal}"
    )


def _collect(sessions: SessionStore, runs: list[StoredRun], stdout: TextIO) -> int:
    """Remove ended runs' folders (never a live, interrupted, paused or unreadable one, nor
    one with branches still to select from)."""
    from ..sessions.branches import BranchStore

    branches = BranchStore(sessions)
    removed = 0
    for run in runs:
        waiting = any(item.state == "ended" for item in branches.branches(run.run_id))
        if run_state(run) == "ended" and not waiting:
            shutil.rmtree(sessions.run_folder(run.run_id))
            removed += 1
    stdout.write(f"removed {removed} ended runs; {len(runs) - removed} kept\n")
    return 0

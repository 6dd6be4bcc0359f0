"""`counterfoil sessions` and `counterfoil resume`, and the session every terminal run keeps.

A run writes its checkpoint beside the receipt log as it goes (see counterfoil.sessions);
`resume` checks it, prints where it stopped, asks an open approval again as a new proposal
and continues with the person's current flags. Every refusal is one sentence and exit 2.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..sessions.intents import settle_intents
from ..sessions.record import DISCARDED, CheckpointRefused, SessionRecord
from ..sessions.recorded_run import RecordedRun
from ..sessions.recorded_run import read_prompt_cache as read_saved_prompt_cache
from ..sessions.reopen import open_for_resume, run_state, status_of
from ..sessions.store import SessionStore, StoredRun
from ..settings.table import Settings
from .command_setup import CommandSetup
from .subcommands import Subcommands
from .terminal import EXIT_SETUP_ERROR

if TYPE_CHECKING:
    from ..sessions.discard import Discarded


def add_session_parsers(group: Subcommands) -> None:
    sessions = group.commands.add_parser("sessions", help="list the runs that can be resumed")
    sessions.add_argument(
        "action",
        nargs="?",
        choices=("list", "gc", "discard"),
        default="list",
        help="gc: remove the checkpoints of ended runs; discard RUN_ID: close an interrupted "
        "or paused run for good (nothing it did is undone)",
    )
    sessions.add_argument("run_id", nargs="?", metavar="RUN_ID", help="the run to discard")
    group.add_log_arguments(sessions)
    resume = group.commands.add_parser(
        "resume", help="continue an interrupted or paused run (default: the latest)"
    )
    resume.add_argument("run_id", nargs="?", metavar="RUN_ID", help="a run id from `sessions`")
    resume.add_argument("--steer", metavar="TEXT", help="one operator message before it continues")
    group.add_agent_flags(resume)


def read_prompt_cache(
    sessions: SessionStore, record: SessionRecord, model: object, stdout: TextIO
) -> None:
    """The KV cache saved with the checkpoint, if its file is there; what happened is said."""
    read_saved_prompt_cache(sessions, record, model, lambda line: stdout.write(line + "\n"))


def open_terminal_session(
    args: argparse.Namespace, setup: CommandSetup, stdout: TextIO
) -> RecordedRun | None:
    """Settle what an interrupted run left, then (for `resume`) the checked checkpoint; None
    once the reason it cannot go on is written."""
    sessions = setup.sessions
    try:
        settled = settle_intents(sessions, setup.store)
    except (CheckpointRefused, OSError) as error:
        stdout.write(f"error: could not settle an interrupted effect: {error}\n")
        return None
    stdout.writelines(f"{found.line}\n" for found in settled)
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
    steer = getattr(args, "steer", None)

    def say(line: str) -> None:
        stdout.write(line + "\n")

    return RecordedRun(sessions, setup.store, plan, steer, settled, say)


def model_to_continue(
    args: argparse.Namespace, settings: Settings, recorded: str | None, run_id: str | None
) -> tuple[Settings, str | None]:
    """The settings a resumed or forked run goes on with: the model its record names, unless
    `--model` names another; and the line that says which (None for a new run)."""
    if run_id is None or recorded is None:
        return settings, None
    if args.model is None:
        args.model = recorded
        return replace(settings, model=recorded), f"model: {recorded} (run {run_id} ran with it)"
    if args.model == recorded:
        return settings, f"model: {recorded} (run {run_id} ran with it)"
    return settings, f"model: {settings.model} (--model; run {run_id} ran with {recorded})"


def sessions_command(args: argparse.Namespace, stdout: TextIO) -> int:
    from ..settings.table import Settings, SettingsError
    from .setting_flags import SETTING_FLAGS

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
    if args.action == "discard" or args.run_id is not None:
        return _discard(sessions, policy.root, args, stdout)
    runs = sessions.runs()
    if args.action == "gc":
        return _collect(sessions, runs, stdout)
    if not runs:
        stdout.write(f"no runs recorded in {policy.root}\n")
        return 0
    stdout.writelines(describe_run(run) + "\n" for run in runs)
    return 0


def _discard(sessions: SessionStore, root: Path, args: argparse.Namespace, stdout: TextIO) -> int:
    from ..sessions.discard import discard_run

    if args.action != "discard" or args.run_id is None:
        stdout.write("error: only `sessions discard` takes a run id: `sessions discard RUN_ID`\n")
        return EXIT_SETUP_ERROR
    try:
        discarded = discard_run(sessions, root, args.run_id)
    except CheckpointRefused as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    stdout.write(f"{discarded_sentence(discarded)}\n")
    return 0


def discarded_sentence(discarded: Discarded) -> str:
    goal = discarded.goal.splitlines()[0] if discarded.goal else ""
    unasked = (
        f"; its open proposal ({discarded.pending}) will not be asked" if discarded.pending else ""
    )
    return (
        f"discarded run {discarded.run_id} (goal: {goal}): it will not be offered to resume"
        f"{unasked}; the files it changed stay as they are"
    )


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
    """Remove ended runs' checkpoints and caches (prompt caches, branches' copies of the
    root), never a live, interrupted, paused or unreadable one's, nor one's with branches
    still to select from (a branch selected settles that: the others were left only by a
    stop before they were discarded). Runs' records, intents and branches' records and
    receipt logs stay: they are the account."""
    from ..branches.records import BranchStore

    branches = BranchStore(sessions)
    removed = 0
    for run in runs:
        states = {item.state for item in branches.branches(run.run_id)}
        waiting = "ended" in states and "selected" not in states
        if run_state(run) in ("ended", DISCARDED) and not waiting:
            for record in branches.branches(run.run_id):
                copy = branches.copy_root(record)
                if copy.is_dir() and not copy.is_symlink():
                    shutil.rmtree(copy)
            sessions.remove_checkpoint_and_caches(run.run_id)
            removed += 1
    stdout.write(
        f"removed the checkpoints and caches of {removed} ended runs (their records stay); "
        f"{len(runs) - removed} kept\n"
    )
    return 0

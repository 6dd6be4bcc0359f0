"""`counterfoil fork`, `counterfoil branches` and `counterfoil select`: try a paused or finished
run in steered branches, each in its own copy of the root, then keep one.

In a branch, a write lands in the branch's own copy and is approved there by the fork (its
receipt says so); a command runs on this machine, so it is asked on the terminal like any
other. Selecting applies the branch's file changes to the real root, each shown and asked
`[y/N]`: there is no flag that approves them all. Every refusal is one sentence and exit 2.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..branches.copies import BranchCopy
from ..branches.records import BranchRecord, BranchStore, listed_state
from ..errors import AgentError
from ..proposals import CommandProposal, ToolProposal
from ..sessions.record import CheckpointRefused
from ..settings.table import Settings
from .command_setup import CommandSetup, set_up_command
from .subcommands import Subcommands
from .terminal import EXIT_INTERRUPTED, EXIT_SETUP_ERROR, StepPrinter, Style

if TYPE_CHECKING:
    from ..evals.package import TaskPackage
    from ..sessions.reopen import ResumePlan

EXIT_NOT_APPLIED = 1


def add_branch_parsers(group: Subcommands) -> None:
    fork = group.commands.add_parser(
        "fork",
        help="try a paused or finished run in steered branches, each in its own copy of the root",
    )
    fork.add_argument("run_id", metavar="RUN_ID", help="a run id from `sessions`")
    fork.add_argument(
        "--steer",
        metavar="TEXT",
        action="append",
        required=True,
        help="one branch's operator message; repeat it for each branch",
    )
    fork.add_argument(
        "--checks",
        metavar="PACKAGE",
        type=Path,
        help="a task package whose held-out checks grade each branch's copy",
    )
    group.add_agent_flags(fork)
    listing = group.commands.add_parser("branches", help="list a forked run's branches")
    listing.add_argument("run_id", metavar="RUN_ID")
    listing.add_argument("--json", action="store_true", help="one JSON document")
    select = group.commands.add_parser(
        "select", help="apply one branch to the root (each change asked) and discard the others"
    )
    select.add_argument("branch", metavar="BRANCH", help="a branch name from `branches`: RUN_ID.N")
    for parser in (listing, select):
        group.add_log_arguments(parser)


def _setup(args: argparse.Namespace, stdout: TextIO, **given: object) -> CommandSetup | None:
    """The setup for `branches` and `select`: the receipt log (which must exist) and `given`."""
    from .setting_flags import SETTING_FLAGS

    mapping = {"receiptLog": args.receiptLog, **given}
    return set_up_command(
        lambda: Settings.from_mapping(mapping, names=SETTING_FLAGS),
        args.root,
        stdout,
        log_must_exist=False,  # a run that has only read has no log yet
    )


def fork_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """0 once every branch ran and is recorded; 2 bad input; 130 stopped with Ctrl-C."""
    from ..branches.forks import open_for_fork
    from ..sessions.intents import settle_intents

    if any(not text.strip() for text in args.steer):
        stdout.write("error: steering must not be empty\n")
        return EXIT_SETUP_ERROR
    package = None
    if args.checks is not None:
        from ..evals.package import PackageError, load_package

        try:
            package = load_package(args.checks)
        except PackageError as error:
            stdout.write(f"error: {error}\n")
            return EXIT_SETUP_ERROR
    from .setting_flags import agent_settings

    setup = set_up_command(lambda: agent_settings(args), args.root, stdout, log_must_exist=False)
    if setup is None:
        return EXIT_SETUP_ERROR
    try:
        settled = settle_intents(setup.sessions, setup.store)
        plan = open_for_fork(setup.sessions, setup.policy.root, args.run_id)
    except (CheckpointRefused, OSError) as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    stdout.writelines(f"{found.line}\n" for found in settled)
    from ..sessions.decisions import DECISIONS_FILE, read_entries, recorded_model
    from .sessions import model_to_continue

    run_id = plan.record.run_id
    recorded = recorded_model(read_entries(setup.sessions.run_folder(run_id) / DECISIONS_FILE))
    settings, model_line = model_to_continue(args, setup.settings, recorded, run_id)
    if model_line is not None:
        stdout.write(model_line + "\n")
    setup = replace(setup, settings=settings)
    try:
        return _fork(args, setup, plan, package, stdin, stdout)
    finally:
        plan.lock.release()


def _fork(
    args: argparse.Namespace,
    setup: CommandSetup,
    plan: ResumePlan,
    package: TaskPackage | None,
    stdin: TextIO,
    stdout: TextIO,
) -> int:
    from ..branches.forks import BranchRun, run_in_branch, start_branch
    from .approvals import format_event, terminal_confirm
    from .sessions import read_prompt_cache

    record = plan.record
    steps = StepPrinter(stdout)
    interrupted = threading.Event()
    generate = _load_model(args, setup.settings, stdout, steps)
    if isinstance(generate, int):
        return generate
    branches = BranchStore(setup.sessions)
    stdout.write(
        f"forking run {record.run_id} at its checkpoint ({record.steps} steps, "
        f"{'interrupted' if record.state == 'running' else record.state}) into "
        f"{len(args.steer)} branch(es), one after another\n"
    )
    if record.pending is not None:
        stdout.write(
            f"note: the approval left open ({record.pending.call_id} {record.pending.tool}) is "
            "not asked in the branches; each continues from the last complete observation\n"
        )
    stdout.writelines(
        f"changed since it was read: {path} (the model is told)\n" for path in plan.changed
    )
    ask = terminal_confirm(stdin, stdout, Style.for_stream(stdout), interrupted)
    ended: list[BranchRecord] = []
    for index, steering in enumerate(args.steer):
        try:
            copy = start_branch(plan, branches, steering)
        except (AgentError, OSError) as error:
            stdout.write(f"error: could not copy the root for a branch: {error}\n")
            return EXIT_SETUP_ERROR
        name = f"{record.run_id}.{copy.name}"
        stdout.write(f"\n==== branch {name}: {steering} ====\n{_copy_line(copy)}\n")
        steps.step = 0
        how = BranchRun(
            generate,
            setup.settings.policy(copy.root),
            *_branch_approvals(name, ask),
            limits=setup.settings.limits(generate),
            on_event=lambda event: stdout.write(format_event(event)),
            should_stop=interrupted.is_set,
            read_agents=setup.settings.agents_file,
            prompt_cache=(
                (lambda: read_prompt_cache(branches.sessions, record, generate, stdout))
                if index == 0
                else None
            ),
            shown=steps.wrap(generate),
        )
        try:
            outcome = run_in_branch(plan, branches, copy, how, package)
        except KeyboardInterrupt:
            stdout.write(f"\n(interrupted: branch {name} was not finished)\n")
            return EXIT_INTERRUPTED
        stdout.write(f"\n== branch {name} ended: {outcome.reason} ==\n{describe_branch(outcome)}\n")
        ended.append(outcome)
        if interrupted.is_set():
            return EXIT_INTERRUPTED
    stdout.write("\n== branches ==\n")
    stdout.writelines(describe_branch(item) + "\n" for item in ended)
    stdout.write(
        f"keep one: counterfoil select {record.run_id}.N --root {setup.policy.root} "
        "(each change asked; the others are discarded)\n"
    )
    return 0


def _copy_line(copy: BranchCopy) -> str:
    cloned, copied = copy.copied.cloned, copy.copied.copied
    if cloned and not copied:
        how = f"{cloned} file(s) cloned copy-on-write"
    elif cloned:
        how = f"{cloned} file(s) cloned copy-on-write, {copied} copied"
    else:
        how = f"{copied} file(s) copied (this file system offers no copy-on-write clone)"
    return f"copy of the root: {copy.root} ({how})"


def _branch_approvals(
    name: str, ask: Callable[[ToolProposal], object]
) -> tuple[Callable[[ToolProposal], object], Callable[[ToolProposal], str]]:
    """How a branch asks, and what its receipts name: a write in the branch's copy is the
    fork's to approve (the copy is the branch's own); a command is asked on the terminal,
    since it runs on this machine."""
    own_copy = f"fork, in branch {name}'s own copy"

    def via_of(proposal: ToolProposal) -> str:
        return f"cli, in branch {name}" if isinstance(proposal, CommandProposal) else own_copy

    def confirm(proposal: ToolProposal) -> object:
        return ask(proposal) if isinstance(proposal, CommandProposal) else True

    return confirm, via_of


def _load_model(
    args: argparse.Namespace, settings: Settings, stdout: TextIO, steps: StepPrinter
) -> Any:
    """The model every branch shares, or the exit status once the reason is written."""
    from .model_load import load_terminal_model

    model = load_terminal_model(args, settings, stdout, steps.on_progress)
    return model if isinstance(model, int) else model.generate


def describe_branch(record: BranchRecord, state: str | None = None) -> str:
    """Two lines: name, state, steps, validation, effects, files changed, prefill avoided,
    checks; then the steering."""
    effects = ", ".join(f"{count} {name}" for name, count in record.effects.items() if count)
    files = ", ".join(record.files_changed) or "nothing"
    checks = ""
    if record.checks_passed is not None:
        passed = sum(1 for check in record.checks if check.passed)
        checks = f"  checks: {'passed' if record.checks_passed else 'failed'} "
        checks += (
            f"({passed}/{len(record.checks)}{', forbidden changes' if record.forbidden else ''})"
        )
    return (
        f"{record.name}  {state or record.state:<9} {record.steps} steps  "
        f"validation: {record.validation}  effects: {effects or 'none'}  changed: {files}  "
        f"prefill avoided: {_prefill(record)}{checks}\n"
        f"  steer: {record.steering}"
    )


def _prefill(record: BranchRecord) -> str:
    if record.prefill_avoided is None:
        return "unknown (the model reports no prompt counters)"
    return prefill_text(record.prefill_avoided, record.prefix_tokens)


def prefill_text(avoided: int, prefix: int | None) -> str:
    """The cache's count beside the shared conversation's: the cache can also hold the start of
    the next message's template (its role header), so it may count a few tokens more."""
    if not prefix:
        return f"{avoided} tokens"
    if avoided <= prefix:
        return f"{avoided} of the shared conversation's {prefix} tokens"
    return (
        f"{avoided} tokens: the shared conversation's {prefix} and {avoided - prefix} of the "
        "next message's template"
    )


def branches_command(args: argparse.Namespace, stdout: TextIO) -> int:
    setup = _setup(args, stdout)
    if setup is None:
        return EXIT_SETUP_ERROR
    try:
        setup.sessions.require_run(args.run_id, setup.policy.root)
    except CheckpointRefused as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    found = BranchStore(setup.sessions).branches(args.run_id)
    live = setup.sessions.is_live(args.run_id)
    states = [listed_state(item, live) for item in found]
    if args.json:  # the daemon's `counterfoil/branches` answer, written once
        from ..branches.listing import branches_answer
        from ..protocol import wire

        document = wire(branches_answer(setup.log_path, args.run_id))
        stdout.write(json.dumps(document, indent=2) + "\n")
        return 0
    if not found:
        stdout.write(
            f"run {args.run_id} has no branches (fork it: counterfoil fork {args.run_id})\n"
        )
        return 0
    stdout.writelines(
        describe_branch(item, state) + "\n" for item, state in zip(found, states, strict=True)
    )
    return 0


def select_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """0 applied; 1 not applied (a changed base, a denied change); 2 bad input; 130."""
    from ..branches.selection import SelectionStopped, select_named_branch
    from ..sessions.intents import settle_intents
    from .approvals import format_receipt, terminal_confirm

    setup = _setup(args, stdout, allowWrites=True)
    if setup is None:
        return EXIT_SETUP_ERROR
    try:  # a change a stopped selection wrote without its receipt is recorded first
        settled = settle_intents(setup.sessions, setup.store)
    except (CheckpointRefused, OSError) as error:
        stdout.write(f"error: could not settle an interrupted effect: {error}\n")
        return EXIT_SETUP_ERROR
    stdout.writelines(f"{found.line}\n" for found in settled)
    interrupted = threading.Event()
    confirm = terminal_confirm(stdin, stdout, Style.for_stream(stdout), interrupted)
    before = len(setup.store)

    def announce(record: BranchRecord, count: int) -> None:
        stdout.write(
            f"selecting branch {record.name} ({record.steering}): {count} change(s), each asked\n"
        )

    try:
        selection = select_named_branch(
            setup.sessions,
            setup.policy.root,
            args.branch,
            setup.policy,
            setup.store,
            confirm,
            before_changes=announce,
        )
    except CheckpointRefused as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    except SelectionStopped as error:
        stdout.write(f"not applied: {error}\n")
        applied = setup.store.receipts()[before:]
        stdout.writelines(format_receipt(receipt) + "\n" for receipt in applied)
        return EXIT_INTERRUPTED if interrupted.is_set() else EXIT_NOT_APPLIED
    stdout.writelines(f"{result}\n" for result in selection.results)
    stdout.writelines(format_receipt(receipt) + "\n" for receipt in setup.store.receipts()[before:])
    discarded = ", ".join(selection.discarded) or "none"
    stdout.write(f"selected {selection.branch.name}; discarded: {discarded}\n")
    return 0


def run_branch_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    if args.command == "fork":
        return fork_command(args, stdin, stdout)
    if args.command == "branches":
        return branches_command(args, stdout)
    return select_command(args, stdin, stdout)

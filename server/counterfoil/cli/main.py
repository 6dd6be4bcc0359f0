"""The terminal adapter: `counterfoil agent`, `counterfoil receipts`, `counterfoil sessions`, ….

It translates flags into a policy, shows each proposal in full and asks `[y/N]` on the
terminal; it decides nothing the core does not.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..errors import AgentError
from ..gate.rules import RuleError
from ..gate.workspace import Workspace
from ..gate.workspace_setup import WorkspaceSetup
from ..run_start import RunPlan, open_run
from ..settings.approval_rules import RULES_FILE, terminal_rules
from ..settings.table import Settings
from . import doctor
from .approvals import (
    format_receipt,
    terminal_confirm,
)
from .command_setup import set_up_command
from .mcp_approvals import terminal_mcp_confirm, terminal_toolbox
from .model_download import download_command
from .receipts import add_receipt_parsers, keys_command, receipts_command
from .sessions import (
    add_session_parsers,
    model_to_continue,
    open_terminal_session,
    sessions_command,
)
from .setting_flags import SETTING_FLAGS, add_setting_flags, agent_settings
from .subcommands import Subcommands, add_log_arguments
from .terminal import (
    EXIT_INTERRUPTED,
    EXIT_SETUP_ERROR,
    Style,
)
from .terminal_run import TerminalRun
from .terminal_text import terminal_safe_stream


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="counterfoil",
        description="A coding agent that asks before every effect and keeps a receipt of each.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    agent = commands.add_parser("agent", help="run the agent on one goal in a folder")
    agent.add_argument("goal", help="what the agent should do")
    agent.add_argument("--root", required=True, type=Path, help="the project folder")
    add_setting_flags(agent)
    agent.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help=f"approval rules for this run (a JSON list, see docs/settings.md), instead of "
        f"{RULES_FILE} in the configuration folder",
    )
    agent.add_argument("--device", choices=("cpu", "gpu"), default=None)
    agent.add_argument("--enable-thinking", action="store_true")

    log_default = Settings.default("receiptLog")
    log_help = f"receipt log: relative to the root, or absolute (default {log_default})"
    add_session_parsers(Subcommands(commands, agent, log_help))
    from .branches import add_branch_parsers

    add_branch_parsers(Subcommands(commands, agent, f"receipt log (default {log_default})"))
    receipts = commands.add_parser("receipts", help="inspect a receipt log")
    receipt_commands = receipts.add_subparsers(dest="receipts_command", required=True)
    add_receipt_parsers(receipt_commands)
    keys = commands.add_parser("keys", help="manage the receipt signing key")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    key_commands.add_parser("init", help="make your Ed25519 signing key")
    export_public = key_commands.add_parser(
        "export-public",
        help="print your public key as an allowed-signers line a team can commit",
    )
    export_public.add_argument("--owner", help="who the key is (default: your user name)")

    revert = commands.add_parser(
        "revert",
        help="undo a file effect, or what a command changed, from its receipt "
        "(asks first, like every effect)",
    )
    revert.add_argument("call_id", metavar="CALL_ID", help="the tool call id of the receipt")
    add_log_arguments(revert, log_help)

    download = commands.add_parser(
        "download", help="download a model now (Ctrl-C stops, running it again resumes)"
    )
    download.add_argument("model", help="model name or hub repo id, e.g. qwen3-4b")

    from .evals import add_arguments as add_eval_arguments

    add_eval_arguments(commands.add_parser("eval", help="run task packages and grade each run"))

    commands.add_parser("serve", help="run the language-server daemon on stdio")
    doctor.add_arguments(commands.add_parser("doctor", help="report what this setup can run"))
    return parser


def run_agent_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """`counterfoil agent` and `resume`: the run described for `open_run`, and its end shown."""
    setup = set_up_command(lambda: agent_settings(args), args.root, stdout, log_must_exist=False)
    if setup is None:
        return EXIT_SETUP_ERROR
    settings, policy = setup.settings, setup.policy
    try:
        rules = terminal_rules(getattr(args, "rules", None))
    except RuleError as error:  # a rule is never dropped in silence: the run does not start
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    session = open_terminal_session(args, setup, stdout)  # `resume`: its checked checkpoint
    if session is None:
        return EXIT_SETUP_ERROR
    settings, model_line = model_to_continue(
        args, settings, session.recorded_model(), session.run_id
    )
    shown = TerminalRun(args, settings, stdout, session, rules, model_line)
    interrupted = shown.interrupted
    outcome = open_run(
        RunPlan(
            args.goal,
            policy,
            setup.store,
            terminal_confirm(stdin, stdout, Style.for_stream(stdout), interrupted),
            shown.load,
            settings.limits,
            session=session,
            on_event=shown.on_event,
            should_stop=interrupted.is_set,
            stopping=interrupted.is_set,  # an open approval stays open
            resumable=shown.resumable,
            toolbox=terminal_toolbox(settings, policy, stdin, stdout),
            confirm_mcp=terminal_mcp_confirm(stdin, stdout, interrupted),
            rules=rules,
            on_rule_approved=shown.rule_approved,
            read_agents=settings.agents_file,
            opened=shown.opened,
            on_interrupt=shown.on_interrupt,
        )
    )
    if isinstance(outcome, int):
        return outcome
    return shown.ended(outcome, setup.store, setup.log_path)


def revert_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """0 reverted; 1 not reverted (denied, drifted, a command, no receipt); 2 setup; 130."""
    setup = set_up_command(
        lambda: Settings.from_mapping(
            {"receiptLog": args.receiptLog, "allowWrites": True}, names=SETTING_FLAGS
        ),
        args.root,
        stdout,
        log_must_exist=True,
    )
    if setup is None:
        return EXIT_SETUP_ERROR
    policy, store = setup.policy, setup.store
    interrupted = threading.Event()
    confirm = terminal_confirm(stdin, stdout, Style.for_stream(stdout), interrupted)
    workspace = Workspace(
        policy, receipt_store=store, setup=WorkspaceSetup(confirm_proposal=confirm)
    )
    before = len(store)
    try:
        result = workspace.revert(args.call_id)
    except AgentError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_INTERRUPTED if interrupted.is_set() else 1
    stdout.write(f"{result}\n")
    stdout.writelines(format_receipt(receipt) + "\n" for receipt in store.receipts()[before:])
    return 0


# Commands that may load a local model (the CPU path wants OpenBLAS preloaded).
MODEL_COMMANDS = ("agent", "resume", "fork", "eval")


def main(
    argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit:  # argparse: 2 for bad flags, 0 for --help
        return exit.code if isinstance(exit.code, int) else EXIT_SETUP_ERROR
    local_model = not str(getattr(args, "model", None) or "").startswith("scripted:")
    if argv is None and args.command in MODEL_COMMANDS and local_model:
        from ..openblas import preload_openblas

        preload_openblas()  # a process of its own: OpenBLAS for the CPU path
    stdin = stdin or sys.stdin
    stdout = terminal_safe_stream(stdout or sys.stdout)  # model-chosen text is shown, not obeyed
    if args.command in ("agent", "resume"):
        return run_agent_command(args, stdin, stdout)
    if args.command == "sessions":
        return sessions_command(args, stdout)
    if args.command == "receipts":
        return receipts_command(args, stdout)
    if args.command == "download":
        return download_command(args.model, stdout)
    if args.command == "keys":
        return keys_command(args, stdout)
    if args.command == "doctor":
        return doctor.doctor_command(args, stdout)
    if args.command == "revert":
        return revert_command(args, stdin, stdout)
    if args.command in ("fork", "branches", "select"):
        from .branches import run_branch_command

        return run_branch_command(args, stdin, stdout)
    if args.command == "eval":
        from .evals import eval_command

        return eval_command(args, stdout, stdin=stdin)
    stdout.write("error: the daemon starts from the `counterfoil serve` entry point\n")
    return EXIT_SETUP_ERROR

"""The terminal adapter: `counterfoil agent`, `counterfoil receipts`, `counterfoil serve`.

It translates flags into a policy, shows each proposal in full and asks `[y/N]` on the
terminal; it decides nothing the core does not.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from .actions import action_to_json
from .context import context_tokens
from .errors import AgentError
from .loop import AgentEvent, run_agent
from .proposals import CommandProposal, EditProposal, ToolProposal
from .receipts import EffectReceipt, ReceiptStore, verify_receipt_log
from .settings import Settings, SettingsError
from .workspace import Workspace

# Flags that are settings: each maps to its key in `Settings.from_mapping`, so checks,
# defaults and error messages are the ones the daemon uses.
SETTING_FLAGS = {
    "model": "--model",
    "allowWrites": "--allow-writes",
    "allowedCommands": "--allow-command",
    "receiptLog": "--receipt-log",
    "maxSteps": "--max-steps",
    "maxTokens": "--max-tokens",
    "commandTimeoutSeconds": "--command-timeout",
    "constrainedDecoding": "--no-constrain",
    "searchFiles": "--no-search",
}


def _command(text: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"cannot split command {text!r}: {error}") from None
    if not argv:
        raise argparse.ArgumentTypeError("command must not be empty")
    return argv


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="counterfoil",
        description="A coding agent that asks before every effect and keeps a receipt of each.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    agent = commands.add_parser("agent", help="run the agent on one goal in a folder")
    agent.add_argument("goal", help="what the agent should do")
    agent.add_argument("--root", required=True, type=Path, help="the project folder")
    default = Settings.default
    agent.add_argument("--model", dest="model",
                       help="MLX model name, repo id or directory, or scripted:PATH "
                            f"(default {default('model')})")
    agent.add_argument("--allow-writes", dest="allowWrites", action="store_const", const=True,
                       help="enable write_file/edit_file")
    agent.add_argument("--allow-command", dest="allowedCommands", action="append", type=_command,
                       metavar="COMMAND", help='an allowed command, e.g. "python validate.py"; '
                                           "matched exactly as split by a shell (repeatable)")
    agent.add_argument("--no-search", dest="searchFiles", action="store_const", const=False,
                       help="leave search_files out of the tools")
    agent.add_argument("--receipt-log", dest="receiptLog", metavar="PATH",
                       help="receipt log: relative to the root, or absolute "
                            f"(default {default('receiptLog')})")
    agent.add_argument("--max-steps", dest="maxSteps", type=int, metavar="N",
                       help=f"default {default('maxSteps')}")
    agent.add_argument("--max-tokens", dest="maxTokens", type=int, metavar="N",
                       help=f"default {default('maxTokens')}")
    agent.add_argument("--command-timeout", dest="commandTimeoutSeconds", type=float,
                       metavar="SECONDS", help=f"default {default('commandTimeoutSeconds')}")
    agent.add_argument("--device", choices=("cpu", "gpu"), default=None)
    agent.add_argument("--enable-thinking", action="store_true")
    agent.add_argument("--no-constrain", dest="constrainedDecoding", action="store_const",
                       const=False, help="do not constrain generation to valid actions")

    receipts = commands.add_parser("receipts", help="inspect a receipt log")
    receipt_commands = receipts.add_subparsers(dest="receipts_command", required=True)
    verify = receipt_commands.add_parser("verify", help="verify every line of a receipt log")
    verify.add_argument("path", type=Path)
    show = receipt_commands.add_parser("show", help="print the receipts of a log")
    show.add_argument("path", type=Path)

    commands.add_parser("serve", help="run the language-server daemon on stdio")
    return parser


def unified_diff(proposal: EditProposal) -> str:
    before = (proposal.base_text or "").splitlines(keepends=True)
    after = proposal.proposed_text.splitlines(keepends=True)
    source = f"a/{proposal.path}" if proposal.base_sha256 is not None else "/dev/null"
    lines = difflib.unified_diff(before, after, source, f"b/{proposal.path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def describe_proposal(proposal: ToolProposal) -> str:
    header = f"{proposal.tool_call_id}: {proposal.action.tool}"
    if isinstance(proposal, CommandProposal):
        return (f"{header}\n  argv: {list(proposal.argv)}\n  cwd:  {proposal.cwd}\n"
                f"  timeout: {proposal.timeout_seconds:g} s")
    state = "new file" if proposal.creates_file else f"base sha256 {proposal.base_sha256}"
    return (f"{header} {proposal.path} ({state}; proposed sha256 {proposal.proposed_sha256})\n"
            f"{unified_diff(proposal) or '(no change)'}")


def read_line(stream: TextIO) -> str:
    """One line without read-ahead, so approvals piped to several runs reach each in turn."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream.readline()
    data = bytearray()
    while not data.endswith(b"\n"):
        byte = os.read(descriptor, 1)
        if not byte:
            break
        data += byte
    return data.decode("utf-8", errors="replace")


def terminal_confirm(stdin: TextIO, stdout: TextIO) -> Callable[[ToolProposal], bool]:
    """Ask on the terminal; only y/yes approves, and end of input means No."""

    def confirm(proposal: ToolProposal) -> bool:
        stdout.write(f"\n--- approval needed ---\n{describe_proposal(proposal)}\nApprove? [y/N] ")
        stdout.flush()
        answer = read_line(stdin)
        if not answer:
            stdout.write("(end of input: no)\n")
        approved = answer.strip().lower() in ("y", "yes")
        stdout.write("approved\n" if approved else "denied\n")
        return approved

    return confirm


def format_event(event: AgentEvent) -> str:
    action = "(none)" if event.action is None else action_to_json(event.action)
    lines = [f"\n== step {event.step} ==", f"response: {event.response}", f"action:   {action}"]
    if event.result is not None:
        lines.append("observation:\n" + event.result)
    return "\n".join(lines)


def format_receipt(receipt: EffectReceipt) -> str:
    artifacts = ", ".join(receipt.changed_artifacts) or "-"
    first_line = receipt.result.splitlines()[0] if receipt.result else ""
    return (f"{receipt.tool_call_id}  {receipt.tool:<11} {receipt.exit_state:<5} "
            f"artifacts: {artifacts}  {first_line}\n  receipt {receipt.receipt_id}")


def agent_settings(args: argparse.Namespace) -> Settings:
    """The settings the flags give; a flag left out takes the default. Raises SettingsError."""
    given = {key: getattr(args, key) for key in SETTING_FLAGS}
    return Settings.from_mapping(given, names=SETTING_FLAGS)


def run_agent_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from .models import GenerationOptions, ModelProgress, load_generate

    try:
        settings = agent_settings(args)
        policy = settings.policy(args.root)
    except SettingsError as error:
        stdout.writelines(f"error: {problem}\n" for problem in error.problems)
        return 2
    except ValueError as error:
        stdout.write(f"error: {error}\n")
        return 2
    log_path = settings.receipt_log_path(policy.root)
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        store = ReceiptStore(log_path)
    except (OSError, ValueError) as error:
        stdout.write(f"error: {error}\n")
        return 2
    workspace = Workspace(policy, receipt_store=store,
                          confirm_proposal=terminal_confirm(stdin, stdout))
    before = len(store)

    def on_progress(progress: ModelProgress) -> None:
        if progress.text:
            stdout.write(progress.text)
            stdout.flush()

    options = replace(GenerationOptions.from_settings(settings),
                      enable_thinking=args.enable_thinking, device=args.device)
    try:
        generate = load_generate(settings.model, options, on_progress=on_progress)
    except ImportError as error:
        stdout.write(f"error: model {settings.model!r} needs the MLX extra "
                     f"(pip install 'counterfoil[mlx]'): {error}\n")
        return 2
    except Exception as error:  # noqa: BLE001 - any load failure is one line
        stdout.write(f"error: {error}\n")
        return 2
    stdout.write(f"goal: {args.goal}\nroot: {policy.root}\nmodel: {settings.model}\n"
                 f"tools: {', '.join(sorted(workspace.available_tools))}\n")
    limits = replace(settings.limits(), max_context_tokens=context_tokens(generate))
    run = run_agent(args.goal, generate, workspace, limits,
                    on_event=lambda event: stdout.write(format_event(event) + "\n"))
    stdout.write(f"\n== run ended: {run.reason} ==\n")
    if run.error:
        stdout.write(f"error: {run.error}\n")
    stdout.write(f"final answer (a model statement, not evidence): {run.final}\n")
    stdout.write(f"modified files: {', '.join(run.modified_files) or '(none)'}\n")
    new_receipts = store.receipts()[before:]
    stdout.write(f"receipts ({len(new_receipts)} new, log {log_path}):\n")
    stdout.writelines(format_receipt(receipt) + "\n" for receipt in new_receipts)
    return 0 if run.completed else 1


def receipts_command(args: argparse.Namespace, stdout: TextIO) -> int:
    if not args.path.is_file():
        stdout.write(f"error: no receipt log at {args.path}\n")
        return 2
    if args.receipts_command == "verify":
        report = verify_receipt_log(args.path)
        count, error = report.count, report.error
    else:
        try:
            receipts = ReceiptStore(args.path).receipts()  # opening verifies every line
        except AgentError as failure:
            stdout.write("(receipts are not shown from a log that does not verify)\n")
            count, error = 0, str(failure)
        else:
            stdout.writelines(format_receipt(receipt) + "\n" for receipt in receipts)
            count, error = len(receipts), None
    if error is None:
        stdout.write(f"ok: {count} receipts verified in {args.path}\n")
        return 0
    stdout.write(f"error: {error}\n")
    return 1


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None,
         stdout: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if args.command == "agent":
        return run_agent_command(args, stdin, stdout)
    if args.command == "receipts":
        return receipts_command(args, stdout)
    from .lsp import serve

    return serve()

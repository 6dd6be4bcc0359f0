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
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from .errors import AgentError
from .loop import AgentEvent, AgentLimits, run_agent, run_verdict
from .policy import ToolPolicy
from .proposals import ToolProposal
from .receipt_commands import add_receipt_parsers, keys_command, receipts_command
from .receipts import EffectReceipt, ReceiptStore
from .terminal import (
    EXIT_INTERRUPTED,
    EXIT_SETUP_ERROR,
    StepPrinter,
    Style,
    exit_status,
    format_verdict,
    short_digest,
    timed_load,
)
from .workspace import Workspace

DEFAULT_MODEL = "qwen3-4b"
DEFAULT_RECEIPT_LOG = ".counterfoil/receipts.jsonl"


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def _command(text: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(text))
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
    agent.add_argument("--model", default=DEFAULT_MODEL,
                       help="MLX model name, repo id or directory, or scripted:PATH "
                            f"(default {DEFAULT_MODEL})")
    agent.add_argument("--allow-writes", action="store_true", help="enable write_file/edit_file")
    agent.add_argument("--allow-command", action="append", type=_command, default=[],
                       metavar="COMMAND", help='an allowed command, e.g. "python validate.py"; '
                                           "matched exactly as split by a shell (repeatable)")
    agent.add_argument("--receipt-log", default=DEFAULT_RECEIPT_LOG,
                       help=f"receipt log, relative to the root (default {DEFAULT_RECEIPT_LOG})")
    agent.add_argument("--max-steps", type=_positive_int, default=AgentLimits().max_steps)
    agent.add_argument("--max-tokens", type=_positive_int, default=1024)
    agent.add_argument("--command-timeout", type=float, default=30.0, metavar="SECONDS")
    agent.add_argument("--device", choices=("cpu", "gpu"), default=None)
    agent.add_argument("--enable-thinking", action="store_true")
    agent.add_argument("--no-constrain", dest="constrain", action="store_false",
                       help="do not constrain generation to valid actions")

    receipts = commands.add_parser("receipts", help="inspect a receipt log")
    receipt_commands = receipts.add_subparsers(dest="receipts_command", required=True)
    add_receipt_parsers(receipt_commands)
    keys = commands.add_parser("keys", help="manage the receipt signing key")
    keys.add_subparsers(dest="keys_command", required=True).add_parser(
        "init", help="make your Ed25519 signing key")

    revert = commands.add_parser(
        "revert", help="undo a file effect from its receipt (asks first, like every effect)"
    )
    revert.add_argument("call_id", metavar="CALL_ID", help="the tool call id of the receipt")
    revert.add_argument("--root", required=True, type=Path, help="the project folder")
    revert.add_argument("--receipt-log", default=DEFAULT_RECEIPT_LOG,
                        help=f"receipt log, relative to the root (default {DEFAULT_RECEIPT_LOG})")

    commands.add_parser("serve", help="run the language-server daemon on stdio")
    return parser


def unified_diff(proposal: ToolProposal) -> str:
    before = (proposal.base_text or "").splitlines(keepends=True)
    after = (proposal.proposed_text or "").splitlines(keepends=True)
    source = f"a/{proposal.path}" if proposal.base_sha256 is not None else "/dev/null"
    target = "/dev/null" if proposal.removes_file else f"b/{proposal.path}"
    lines = difflib.unified_diff(before, after, source, target)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def describe_proposal(proposal: ToolProposal, style: Style | None = None) -> str:
    header = f"{proposal.tool_call_id}: {proposal.action.tool}"
    if proposal.kind == "command":
        return (f"{header}\n  argv: {list(proposal.argv or ())}\n  cwd:  {proposal.cwd}\n"
                f"  timeout: {proposal.timeout_seconds:g} s")
    if proposal.reverts is not None:
        header += f" of {proposal.reverts}"
    base = "new file" if proposal.creates_file else f"base {short_digest(proposal.base_sha256)}"
    after = ("removes the file" if proposal.removes_file
             else f"proposed {short_digest(proposal.proposed_sha256)}")
    diff = unified_diff(proposal)
    return (f"{header} {proposal.path}\n  sha256 {base} -> {after}\n"
            f"{(style or Style()).diff(diff) if diff else '(no change)'}")


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


def terminal_confirm(
    stdin: TextIO,
    stdout: TextIO,
    style: Style | None = None,
    interrupted: threading.Event | None = None,
) -> Callable[[ToolProposal], bool]:
    """Ask on the terminal; only y/yes approves, and end of input or Ctrl-C means No.

    Ctrl-C while waiting sets `interrupted`, so the run stops at its next step.
    """

    def confirm(proposal: ToolProposal) -> bool:
        if interrupted is not None and interrupted.is_set():
            return False
        try:
            stdout.write(f"\n--- approval needed ---\n{describe_proposal(proposal, style)}\n"
                         "Approve? [y/N] ")
            stdout.flush()
            answer = read_line(stdin)
        except KeyboardInterrupt:
            if interrupted is None:
                raise
            interrupted.set()
            stdout.write("\n(interrupted: no)\n")
            return False
        if not answer:
            stdout.write("(end of input: no)\n")
        approved = answer.strip().lower() in ("y", "yes")
        stdout.write("denied\n" if not approved else "approved; running …\n"
                     if proposal.kind == "command" else "approved\n")
        return approved

    return confirm


def format_event(event: AgentEvent) -> str:
    """What a step observed; its header and response were printed as the model answered."""
    if event.result is None:
        return ""
    return "observation:\n" + event.result + "\n"


def format_receipt(receipt: EffectReceipt) -> str:
    artifacts = ", ".join(receipt.changed_artifacts) or "-"
    first_line = receipt.result.splitlines()[0] if receipt.result else ""
    return (f"{receipt.tool_call_id}  {receipt.tool:<11} {receipt.exit_state:<5} "
            f"artifacts: {artifacts}  {first_line}\n  receipt {receipt.receipt_id}")


def run_agent_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from .models import load_generate

    try:
        policy = ToolPolicy(args.root, allow_writes=args.allow_writes,
                            allowed_commands=tuple(args.allow_command),
                            command_timeout_seconds=args.command_timeout)
    except ValueError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    log_path = _receipt_log_path(policy.root, args.receipt_log)
    if log_path is None:
        stdout.write("error: --receipt-log must be a relative path inside the root\n")
        return EXIT_SETUP_ERROR
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        store = ReceiptStore(log_path)
    except (OSError, ValueError) as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    style = Style.for_stream(stdout)
    interrupted = threading.Event()
    workspace = Workspace(policy, receipt_store=store,
                          confirm_proposal=terminal_confirm(stdin, stdout, style, interrupted))
    before = len(store)
    steps = StepPrinter(stdout)
    stdout.write(f"goal: {args.goal}\nroot: {policy.root}\n"
                 f"tools: {', '.join(sorted(workspace.available_tools))}\n")
    try:
        generate = timed_load(stdout, args.model, lambda: load_generate(
            args.model, max_tokens=args.max_tokens, enable_thinking=args.enable_thinking,
            device=args.device, constrain=args.constrain,
            available_tools=workspace.available_tools,
            allowed_commands=policy.allowed_commands, on_token=steps.on_token,
        ))
    except KeyboardInterrupt:
        stdout.write("interrupted while loading the model\n")
        return EXIT_INTERRUPTED
    except ImportError as error:
        stdout.write(f"error: model {args.model!r} needs the MLX extra "
                     f"(pip install 'counterfoil[mlx]'): {error}\n")
        return EXIT_SETUP_ERROR
    except Exception as error:  # noqa: BLE001 - any load failure is one line
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    try:
        run = run_agent(args.goal, steps.wrap(generate), workspace,
                        AgentLimits(max_steps=args.max_steps),
                        on_event=lambda event: stdout.write(format_event(event)),
                        should_stop=interrupted.is_set)
    except KeyboardInterrupt:
        interrupted.set()
        stdout.write("\n(interrupted)\n")
        completed, reason, final, run_error = False, "interrupted", None, None
        verdict = run_verdict(workspace)
    else:
        completed, reason, final, run_error = run.completed, run.reason, run.final, run.error
        verdict = run.verdict
        if interrupted.is_set():
            reason = "interrupted"
    status = exit_status(completed, verdict, interrupted=interrupted.is_set())
    stdout.write(f"\n== run ended: {reason} ==\n")
    new_receipts = store.receipts()[before:]
    stdout.write(f"receipts ({len(new_receipts)} new, log {log_path}):\n")
    stdout.writelines(format_receipt(receipt) + "\n" for receipt in new_receipts)
    stdout.write(format_verdict(verdict, reason=reason, final=final, status=status,
                                error=run_error))
    stdout.flush()
    return status


def revert_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """0 reverted; 1 not reverted (denied, drifted, a command, no receipt); 2 setup; 130."""
    try:
        policy = ToolPolicy(args.root, allow_writes=True)
    except ValueError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    log_path = _receipt_log_path(policy.root, args.receipt_log)
    if log_path is None or not log_path.is_file():
        stdout.write(f"error: no receipt log at {log_path or args.receipt_log}\n")
        return EXIT_SETUP_ERROR
    try:
        store = ReceiptStore(log_path)
    except (OSError, ValueError) as error:
        stdout.write(f"error: {error}\n")
        return EXIT_SETUP_ERROR
    interrupted = threading.Event()
    confirm = terminal_confirm(stdin, stdout, Style.for_stream(stdout), interrupted)
    workspace = Workspace(policy, receipt_store=store, confirm_proposal=confirm)
    before = len(store)
    try:
        result = workspace.revert(args.call_id)
    except AgentError as error:
        stdout.write(f"error: {error}\n")
        return EXIT_INTERRUPTED if interrupted.is_set() else 1
    stdout.write(f"{result}\n")
    stdout.writelines(format_receipt(receipt) + "\n" for receipt in store.receipts()[before:])
    return 0


def _receipt_log_path(root: Path, raw: str) -> Path | None:
    relative = Path(raw)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    return root / relative


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None,
         stdout: TextIO | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit:  # argparse: 2 for bad flags, 0 for --help
        return exit.code if isinstance(exit.code, int) else EXIT_SETUP_ERROR
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if args.command == "agent":
        return run_agent_command(args, stdin, stdout)
    if args.command == "receipts":
        return receipts_command(args, stdout)
    if args.command == "keys":
        return keys_command(args, stdout)
    if args.command == "revert":
        return revert_command(args, stdin, stdout)
    from .lsp import serve

    return serve()

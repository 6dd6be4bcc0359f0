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
from pathlib import Path
from typing import TextIO

from .actions import action_to_json
from .errors import AgentError
from .loop import AgentEvent, AgentLimits, run_agent
from .models.endpoint import SCHEMA_MODES
from .models.progress import ModelProgress
from .policy import ToolPolicy
from .proposals import ToolProposal
from .receipts import EffectReceipt, ReceiptStore, verify_receipt_log
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
    agent.add_argument("--model", default=None,
                       help="MLX model name, repo id or directory, or scripted:PATH "
                            f"(default {DEFAULT_MODEL}); with --endpoint, the served model's "
                            "name (default: the first the server lists)")
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
    remote = agent.add_argument_group("model server (see docs/remote.md)")
    remote.add_argument("--endpoint", metavar="URL",
                        help="an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    remote.add_argument("--api-key-env", metavar="NAME",
                        help="the environment variable holding the key "
                             "(default OPENAI_API_KEY if set)")
    remote.add_argument("--allow-insecure-http", action="store_true",
                        help="allow http:// to a machine other than this one")
    remote.add_argument("--schema-mode", choices=SCHEMA_MODES, default="json_schema",
                        help="how the action schema is requested (default json_schema)")
    remote.add_argument("--endpoint-timeout", type=float, default=120.0, metavar="SECONDS",
                        help="seconds to wait for the server's next bytes (default 120)")

    receipts = commands.add_parser("receipts", help="inspect a receipt log")
    receipt_commands = receipts.add_subparsers(dest="receipts_command", required=True)
    verify = receipt_commands.add_parser("verify", help="verify every line of a receipt log")
    verify.add_argument("path", type=Path)
    show = receipt_commands.add_parser("show", help="print the receipts of a log")
    show.add_argument("path", type=Path)

    commands.add_parser("serve", help="run the language-server daemon on stdio")
    return parser


def unified_diff(proposal: ToolProposal) -> str:
    before = (proposal.base_text or "").splitlines(keepends=True)
    after = (proposal.proposed_text or "").splitlines(keepends=True)
    source = f"a/{proposal.path}" if proposal.base_sha256 is not None else "/dev/null"
    lines = difflib.unified_diff(before, after, source, f"b/{proposal.path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def describe_proposal(proposal: ToolProposal) -> str:
    header = f"{proposal.tool_call_id}: {proposal.action.tool}"
    if proposal.kind == "command":
        return (f"{header}\n  argv: {list(proposal.argv or ())}\n  cwd:  {proposal.cwd}\n"
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


def run_agent_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from .models import load_generate

    try:
        policy = ToolPolicy(args.root, allow_writes=args.allow_writes,
                            allowed_commands=tuple(args.allow_command),
                            command_timeout_seconds=args.command_timeout)
    except ValueError as error:
        stdout.write(f"error: {error}\n")
        return 2
    log_path = _receipt_log_path(policy.root, args.receipt_log)
    if log_path is None:
        stdout.write("error: --receipt-log must be a relative path inside the root\n")
        return 2
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        store = ReceiptStore(log_path)
    except (OSError, ValueError) as error:
        stdout.write(f"error: {error}\n")
        return 2
    workspace = Workspace(policy, receipt_store=store,
                          confirm_proposal=terminal_confirm(stdin, stdout))
    before = len(store)

    def on_token(text: str) -> None:
        stdout.write(text)
        stdout.flush()

    remote = endpoint_options(args, stdout)
    model = args.model or ("" if args.endpoint else DEFAULT_MODEL)
    try:
        generate = load_generate(
            model, max_tokens=args.max_tokens, enable_thinking=args.enable_thinking,
            device=args.device, constrain=args.constrain,
            available_tools=workspace.available_tools,
            allowed_commands=policy.allowed_commands, on_token=on_token, **remote,
        )
    except ImportError as error:
        stdout.write(f"error: model {model!r} needs the MLX extra "
                     f"(pip install 'counterfoil[mlx]'): {error}\n")
        return 2
    except Exception as error:  # noqa: BLE001 - any load failure is one line
        stdout.write(f"error: {error}\n")
        return 2
    model = getattr(generate, "model", None) or model
    if args.endpoint:
        model += f" at {args.endpoint}"
    stdout.write(f"goal: {args.goal}\nroot: {policy.root}\nmodel: {model}\n"
                 f"tools: {', '.join(sorted(workspace.available_tools))}\n")
    run = run_agent(args.goal, generate, workspace, AgentLimits(max_steps=args.max_steps),
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


def endpoint_options(args: argparse.Namespace, stdout: TextIO) -> dict[str, object]:
    """`load_generate` options for --endpoint; the server's notes go to the terminal."""
    if not args.endpoint:
        return {}

    def on_progress(progress: ModelProgress) -> None:
        if progress.state in ("ready", "error") and progress.message:
            stdout.write(f"\n[model] {progress.message}\n")

    return {"endpoint": args.endpoint, "api_key_env": args.api_key_env,
            "allow_insecure_http": args.allow_insecure_http, "schema_mode": args.schema_mode,
            "timeout_seconds": args.endpoint_timeout, "on_progress": on_progress}


def _receipt_log_path(root: Path, raw: str) -> Path | None:
    relative = Path(raw)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    return root / relative


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

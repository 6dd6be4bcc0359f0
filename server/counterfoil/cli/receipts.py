"""`counterfoil receipts verify|show|diff|gc` and `counterfoil keys init`: reading the evidence."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path
from typing import TextIO

from ..errors import AgentError
from ..files.path_text import shown_path
from ..model_identity import describe_identity
from ..receipt_fields import ReceiptEvidence
from ..receipts import EffectReceipt, ReceiptStore, canonical_json, verify_receipt_log
from ..receipts.content import load_object
from ..receipts.own_folder import own_folder
from ..receipts.retention import collect_garbage
from ..receipts.signing import init_key, signature_checker
from ..receipts.verify import read_receipt_log
from ..sessions.decisions import recorded_run_ids, unreceipted_decisions, verify_run_records
from ..sessions.intents import describe_open_intents  # registers what gc keeps for runs
from ..sessions.rule_record import rule_problems
from .evidence import (
    add_evidence_parsers,
    export_command,
    export_public_command,
    verify_bundle_command,
)
from .terminal import bytes_diff


def add_receipt_parsers(receipt_commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    verify = receipt_commands.add_parser("verify", help="verify every line of a receipt log")
    verify.add_argument("path", type=Path)
    verify.add_argument(
        "--public-key",
        type=Path,
        metavar="FILE",
        help="require every line to be signed by this key (ed25519:<base64>)",
    )
    verify.add_argument(
        "--root", type=Path, help="also check that each file still holds its last receipt's bytes"
    )
    show = receipt_commands.add_parser(
        "show", help="print the receipts of a log, checking every line as it goes"
    )
    show.add_argument("path", type=Path)
    show.add_argument("--output", action="store_true", help="print each command's stored output")
    diff = receipt_commands.add_parser("diff", help="print the diff a file receipt applied")
    diff.add_argument("path", type=Path)
    diff.add_argument("call_id")
    gc = receipt_commands.add_parser(
        "gc", help="remove stored objects that no receipt of any log in the folder names"
    )
    gc.add_argument("path", type=Path)
    add_evidence_parsers(receipt_commands)


def receipts_command(args: argparse.Namespace, stdout: TextIO) -> int:
    if args.receipts_command == "export":
        return export_command(args, stdout)
    if args.receipts_command == "verify-bundle":
        return verify_bundle_command(args, stdout)
    try:
        mode = os.lstat(args.path).st_mode
    except OSError:
        mode = None
    if mode is None or not stat.S_ISREG(mode):
        what = "no receipt log" if mode is None else "not a regular file:"
        stdout.write(
            f"error: {what} at {args.path}\n" if mode is None else f"error: {what} {args.path}\n"
        )
        return 2
    try:
        if args.receipts_command == "verify":
            return _verify(args, stdout)
        if args.receipts_command == "show":
            return _show(args, stdout)
        if args.receipts_command == "diff":
            return _diff(args, stdout)
        return _gc(args, stdout)
    except AgentError as error:
        stdout.write(f"error: {error}\n")
        return 1


def _verify(args: argparse.Namespace, stdout: TextIO) -> int:
    public_key = None
    if args.public_key is not None:
        try:
            public_key = args.public_key.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as error:
            stdout.write(f"error: could not read public key {args.public_key}: {error}\n")
            return 2
    report = verify_receipt_log(args.path, public_key=public_key, root=args.root)
    check = None if public_key is None else signature_checker(public_key)
    stdout.writelines(f"drift: {line}\n" for line in report.drift)
    if args.root is not None and not report.drift_checked:
        stdout.write("drift: not checked (files are compared only when the chain verifies)\n")
    stdout.writelines(f"{line}\n" for line in describe_open_intents(args.path))
    recorded = recorded_run_ids(_store(args).iter_receipts()) if report.ok else set()
    _, problems = verify_run_records(args.path, check, recorded)  # the runs' own records
    if report.ok:  # each rule-approved effect: its rule, in the set its run recorded
        problems += rule_problems(args.path, _store(args).iter_receipts())
    if report.ok and problems:
        stdout.writelines(f"error: {problem}\n" for problem in problems)
        return 1
    if report.ok:
        signed = ", signatures checked" if public_key is not None else ""
        stdout.write(f"ok: {report.count} receipts verified in {args.path}{signed}\n")
        return 0
    stdout.write(f"error: {report.error}\n")
    return 1


def _store(args: argparse.Namespace) -> ReceiptStore:
    return ReceiptStore(args.path, signer=None)


def describe_receipt(receipt: EffectReceipt) -> str:
    """One receipt for a person: run, time, tool, path or argv, state."""
    evidence = receipt.evidence
    arguments = receipt.arguments
    if receipt.tool == "run_command":
        argv = arguments.get("argv") if evidence.argv is None else list(evidence.argv)
        status = evidence.exit_status if evidence.has("exit_status") else "?"
        target = f"argv {argv}  exit {'timeout' if status is None else status}"
    elif evidence.mcp is not None:
        target = f"{arguments.get('server')}/{arguments.get('name')}"
    else:
        target = shown_path(str(arguments.get("path", "")))
    when = evidence.time or "-"
    run = (evidence.run_id or "-")[:12]
    lines = [
        (
            f"{receipt.tool_call_id}  {when}  run {run}  {receipt.tool:<11} "
            f"{receipt.exit_state:<5} {target}"
        )
    ]
    if evidence.has("result_sha256"):
        lines.append(f"  base   {evidence.base_sha256 or '(new file)'}")
        lines.append(f"  result {evidence.result_sha256}")
    lines.extend(_tree_lines(evidence))
    lines.extend(_mcp_lines(receipt))
    approval = evidence.approval
    if approval is not None:
        decision = _review_decision(evidence)
        ran = "" if decision is None else f" (to run it; its changes were {decision})"
        if approval.rule is not None:
            lines.append(
                f"  approved by rule {approval.rule_index} of {approval.by}'s rule set "
                f"{approval.rules_sha256}{ran} (not asked)"
            )
            lines.append(f"  rule {approval.rule}")
        else:
            asked = "" if approval.asked is not False else " (not asked: marked read-only)"
            lines.append(f"  approved by {approval.by} via {approval.via}{ran}{asked}")
        model = describe_identity(None if approval.model is None else approval.model.as_record())
        if model is not None:
            lines.append(f"  proposed by {model}")
    lines.append(f"  receipt {receipt.receipt_id}")
    return "\n".join(lines)


def _tree_lines(evidence: ReceiptEvidence) -> list[str]:
    lines: list[str] = []
    sandbox = evidence.sandbox
    if sandbox is not None:
        lines.append(f"  sandbox {sandbox.mode} ({sandbox.mechanism})")
    record = evidence.tree_changes
    decision = _review_decision(evidence)
    if record is not None and record.changes is not None:
        heading = "tree changes" if decision is None else "changes it made in its review copy"
        lines.append(f"  {heading} {record.count}")
        for change in record.changes:
            note = f"  ({change.note})" if change.note else ""
            lines.append(f"    {change.change} {shown_path(str(change.path))}{note}")
        more = (record.count or 0) - len(record.changes)
        if more > 0:
            lines.append(f"    [and {more} more]")
    review = evidence.review
    if review is not None:
        count = len(review.applied or ())
        landed = (
            "nothing landed in the root" if count == 0 else f"{count} file(s) applied to the root"
        )
        lines.append(f"  review {decision}: {landed}")
    if evidence.tree_drift is not None:
        lines.append(f"  changed before it, not by it: {evidence.tree_drift.count}")
    return lines


def _mcp_lines(receipt: EffectReceipt) -> list[str]:
    """An MCP call's server, definition, exact arguments and result (see gate/mcp_calls.py)."""
    facts = receipt.evidence.mcp
    if facts is None:
        return []
    server = facts.server
    reached = ""
    if server is not None:
        command = server.get("command")
        reached = str(server.get("url") or " ".join(map(str, command or ())))  # type: ignore[arg-type]
    kept = "" if facts.result_kept else " (not kept: over the limit)"
    return [
        f"  mcp server {'?' if server is None else server.get('name')}: {reached}",
        f"  definition {facts.definition_sha256}",
        f"  arguments {canonical_json(receipt.arguments.get('arguments', {}))}",
        f"  result {facts.result_sha256} ({facts.result_bytes} bytes){kept}",
    ]


def _review_decision(evidence: ReceiptEvidence) -> str | None:
    """A reviewed command's decision on its changes (None: the command was not reviewed)."""
    return None if evidence.review is None else str(evidence.review.decision)


def _show(args: argparse.Namespace, stdout: TextIO) -> int:
    """Each receipt once its line has verified; "verified" only when every line and the head
    did (one pass, so a big log costs one read)."""

    def show(receipt: EffectReceipt) -> None:
        stdout.write(describe_receipt(receipt) + "\n")
        digest = receipt.evidence.output_sha256
        if args.output and digest is not None:
            output = load_object(own_folder(args.path), digest)
            if output is None:
                stdout.write("  (output not in the content store)\n")
            else:
                text = output.decode("utf-8", errors="replace")
                stdout.write("  output:\n" + "".join(f"    {line}\n" for line in text.splitlines()))
                if receipt.evidence.output_truncated:
                    stdout.write("  (output was truncated)\n")
        receipted.add(receipt.tool_call_id)

    receipted: set[str] = set()
    report = read_receipt_log(args.path, show)
    if not report.ok:
        stdout.write(f"error: {report.error}\n")
        return 1
    # The call ids no receipt explains (rejected, refused, failed, interrupted), from the
    # run records that verify; one that does not is an error, and nothing of it is shown.
    lines, problems = unreceipted_decisions(args.path, receipted)
    stdout.writelines(f"{line}\n" for line in lines)
    if problems:
        stdout.writelines(f"error: {problem}\n" for problem in problems)
        return 1
    stdout.write(f"ok: {report.count} receipts verified in {args.path}\n")
    return 0


def _diff(args: argparse.Namespace, stdout: TextIO) -> int:
    receipt = _store(args).get(args.call_id)
    if receipt is None:
        stdout.write(f"error: no receipt for {args.call_id}\n")
        return 1
    evidence = receipt.evidence
    if not evidence.has("result_sha256"):
        stdout.write(f"error: {args.call_id} is a {receipt.tool} receipt without file bytes\n")
        return 1
    folder = own_folder(args.path)
    base_digest, result_digest = evidence.base_sha256, evidence.result_sha256
    before = b"" if base_digest is None else load_object(folder, base_digest)
    after = None if result_digest is None else load_object(folder, result_digest)
    if before is None or after is None:
        stdout.write("error: the file's bytes are not in the content store\n")
        return 1
    path = str(receipt.arguments.get("path", ""))
    source = "/dev/null" if base_digest is None else f"a/{path}"
    lines = bytes_diff(before, after, source, f"b/{path}")
    stdout.write(
        "".join(line if line.endswith("\n") else line + "\n" for line in lines) or "(no change)\n"
    )
    return 0


def _gc(args: argparse.Namespace, stdout: TextIO) -> int:
    report = collect_garbage(args.path)
    stdout.writelines(f"left in place: {line}\n" for line in report.skipped)
    stdout.write(f"removed {len(report.removed)} objects; {report.kept} kept\n")
    return 0


def keys_command(args: argparse.Namespace, stdout: TextIO) -> int:
    if args.keys_command == "export-public":
        return export_public_command(args, stdout)
    try:
        path, public_key = init_key()
    except AgentError as error:
        stdout.write(f"error: {error}\n")
        return 1
    stdout.write(
        f"signing key: {path}\npublic key: {public_key}\n"
        f"(check a log with: counterfoil receipts verify LOG --public-key "
        f"{path.with_suffix('.pub')})\n"
    )
    return 0

"""`counterfoil receipts export|verify-bundle` and `counterfoil keys export-public`: evidence
that travels with a commit as a signed in-toto attestation in git notes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from ..attestation.check import verify_envelope
from ..attestation.export import export_evidence
from ..attestation.git import NOTES_REF, repository_of
from ..attestation.signers import ALLOWED_SIGNERS_FILE, read_allowed_signers, signer_line
from ..errors import AgentError
from ..receipt_evidence import os_user
from ..receipts.signing import load_signer
from ..settings.table import Settings


def add_evidence_parsers(receipt_commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    export = receipt_commands.add_parser(
        "export",
        help="sign the runs' receipts for a commit as an in-toto attestation (a git note)",
    )
    export.add_argument(
        "--root", type=Path, default=Path("."), help="the project folder (default: here)"
    )
    export.add_argument(
        "--receipt-log",
        dest="receiptLog",
        metavar="PATH",
        help=f"relative to the root, or absolute (default {Settings.default('receiptLog')})",
    )
    export.add_argument(
        "--run",
        dest="runs",
        action="append",
        metavar="RUN_ID",
        help="a run to include (repeatable; default: every run that changed a file the "
        "commit changes)",
    )
    export.add_argument("--commit", default="HEAD", metavar="REV", help="default HEAD")
    export.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help=f"write the envelope to FILE instead of a note under {NOTES_REF}",
    )
    verify = receipt_commands.add_parser(
        "verify-bundle",
        help="verify a commit's evidence note (or an envelope file) offline",
    )
    verify.add_argument("target", nargs="?", default="HEAD", metavar="REV|FILE")
    verify.add_argument("--repo", type=Path, default=Path("."), help="default: here")
    verify.add_argument(
        "--allowed-signers",
        type=Path,
        metavar="FILE",
        help=f"the keys allowed to sign (default: the repository's {ALLOWED_SIGNERS_FILE})",
    )
    verify.add_argument(
        "--commit", metavar="REV", help="the commit an envelope FILE is checked against"
    )


def export_command(args: argparse.Namespace, stdout: TextIO) -> int:
    root = args.root.resolve()
    log = Path(args.receiptLog or Settings.default("receiptLog"))
    try:
        done = export_evidence(root, log if log.is_absolute() else root / log, args.commit,
                               args.runs, args.out)  # fmt: skip
    except AgentError as error:
        stdout.write(f"error: {error}\n")
        return 1
    where = (
        done.where if args.out is not None else f"a note on {done.commit[:12]} under {done.where}"
    )
    stdout.write(
        f"exported {len(done.runs)} run(s), {done.effects} effect(s), {done.files} file(s) "
        f"to {where}\nvalidation: {done.validation}\n"
    )
    stdout.writelines(
        f"not from a receipt: {json.dumps(path)} (committed bytes no receipt wrote)\n"
        for path in done.unreceipted
    )
    return 0


def verify_bundle_command(args: argparse.Namespace, stdout: TextIO) -> int:
    try:
        repository, _ = repository_of(args.repo.resolve())
        signers_path = args.allowed_signers or repository.top / ALLOWED_SIGNERS_FILE
        allowed = read_allowed_signers(signers_path)
        candidate = Path(args.target)
        if candidate.is_file():
            data, commit = candidate.read_bytes(), args.commit
        else:
            commit = repository.commit(args.target)
            note = repository.note(commit)
            if note is None:
                raise AgentError(f"commit {commit[:12]} has no note under {NOTES_REF}")
            data = note
    except (AgentError, OSError) as error:
        stdout.write(f"error: {error}\n")
        return 2
    statement, findings = verify_envelope(data, allowed, repository, commit)
    if findings:
        stdout.writelines(f"finding: {finding}\n" for finding in findings)
        return 1
    assert statement is not None
    predicate = statement["predicate"]
    stdout.write(
        f"ok: evidence for {predicate['commit'][:12]} verified: {len(predicate['runs'])} run(s), "
        f"{len(predicate['effects'])} effect(s), {len(statement['subject'])} file(s), "
        f"validation {predicate['validation']['status']}\n"
    )
    return 0


def export_public_command(args: argparse.Namespace, stdout: TextIO) -> int:
    try:
        signer = load_signer()
        if signer is None:
            raise AgentError("no signing key yet: counterfoil keys init")
        stdout.write(signer_line(args.owner or os_user(), signer.public_key) + "\n")
    except AgentError as error:
        stdout.write(f"error: {error}\n")
        return 1
    return 0

"""`counterfoil receipts export|verify-bundle` and `counterfoil keys export-public`: evidence
that travels with a commit as a signed in-toto attestation in git notes."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..attestation.check import verify_envelope
from ..attestation.dsse import MAX_ENVELOPE_BYTES
from ..attestation.export import export_evidence
from ..attestation.git import NOTES_REF, Repository, repository_of
from ..attestation.signers import (
    ALLOWED_SIGNERS_FILE,
    AllowedSigners,
    allowed_signers_of,
    read_allowed_signers,
    signer_line,
)
from ..attestation.statement import review_rejections
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
    verify.add_argument(
        "target",
        nargs="?",
        metavar="REV|PATH",
        help="a revision (default HEAD), or an envelope file given as a path with a / "
        "(./evidence.json); a name without a / is never read as a file",
    )
    verify.add_argument("--repo", type=Path, default=Path("."), help="default: here")
    signers = verify.add_mutually_exclusive_group()
    signers.add_argument(
        "--signers",
        "--allowed-signers",
        dest="signers",
        type=Path,
        metavar="FILE",
        help="the keys allowed to sign, as OWNER ed25519:<base64> lines",
    )
    signers.add_argument(
        "--signers-from",
        dest="signers_from",
        metavar="REV",
        help=f"the keys allowed to sign: {ALLOWED_SIGNERS_FILE} as committed in REV (the "
        "pull request's base); never the commit under review",
    )
    verify.add_argument(
        "--file", type=Path, metavar="FILE", help="read the envelope from FILE, not a note"
    )
    verify.add_argument(
        "--commit", metavar="REV", help="the commit an envelope file is checked against (HEAD)"
    )
    verify.add_argument(
        "--allow-hand-changes",
        dest="allow_hand_changes",
        action="append",
        default=[],
        metavar="PATTERN",
        help="accept a change by hand to a path matching PATTERN, such as CHANGELOG.md "
        "(repeatable; never a file a validation command reads or runs)",
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
        f"exported {len(done.runs)} run(s), {effect_count(done.effects, done.review_rejected)}, "
        f"{done.files} file(s) to {where}\nvalidation: {done.validation}\n"
    )
    stdout.writelines(
        f"not from a receipt: {json.dumps(path)} (changed by hand: bytes no receipt wrote)\n"
        for path in done.unreceipted
    )
    return 0


def verify_bundle_command(args: argparse.Namespace, stdout: TextIO) -> int:
    try:
        repository, _ = repository_of(args.repo.resolve())
        allowed = _allowed_signers(args, repository)
        data, commit = _envelope(args, repository)
    except (AgentError, OSError) as error:
        stdout.write(f"error: {error}\n")
        return 2
    check = verify_envelope(
        data, list(allowed.signers), repository, commit, tuple(args.allow_hand_changes)
    )
    findings = [*allowed.problems, *check.findings]
    stdout.writelines(
        f"hand change: {json.dumps(change.path)}"
        + (f" (allowed by {json.dumps(change.allowed_by)})" if change.accepted else "")
        + "\n"
        for change in check.hand_changes
    )
    if findings:
        stdout.writelines(f"finding: {finding}\n" for finding in findings)
        return 1
    assert check.statement is not None and check.signer is not None
    predicate = check.statement["predicate"]
    stdout.write(
        f"ok: evidence for {predicate['commit'][:12]} verified, signed by "
        f"{json.dumps(check.signer.owner)} (key {check.signer.keyid}): "
        f"{len(predicate['runs'])} run(s), "
        f"{effect_count(len(predicate['effects']), review_rejections(predicate['effects']))}, "
        f"{len(check.statement['subject'])} file(s), "
        f"validation {predicate['validation']['status']}\n"
    )
    return 0


def effect_count(effects: int, review_rejected: Sequence[str]) -> str:
    """`3 effect(s)`, and `(1 review rejected)` after it when a review was rejected."""
    rejected = f" ({len(review_rejected)} review rejected)" if review_rejected else ""
    return f"{effects} effect(s){rejected}"


def _allowed_signers(args: argparse.Namespace, repository: Repository) -> AllowedSigners:
    """From the file or the revision named: never from the work tree or the commit under
    review, which could name its own key."""
    if args.signers is not None:
        return read_allowed_signers(args.signers)
    if args.signers_from is None:
        raise AgentError(
            "name who may sign: --signers-from BASE (the allowed signers as committed in the "
            "pull request's base) or --signers FILE"
        )
    base = repository.commit(args.signers_from)
    data = repository.blobs(base, [ALLOWED_SIGNERS_FILE])[ALLOWED_SIGNERS_FILE]
    if data is None:
        raise AgentError(f"{args.signers_from} has no {ALLOWED_SIGNERS_FILE}; nobody may sign")
    return allowed_signers_of(data, f"{ALLOWED_SIGNERS_FILE} in {base[:12]}")


def _envelope(args: argparse.Namespace, repository: Repository) -> tuple[bytes, str]:
    """The envelope's bytes and the commit to check it against. A target is a revision unless
    it contains a `/` or comes with `--file`: a file named `HEAD` in the folder under review is
    never read as the evidence for HEAD."""
    target: str | None = args.target
    path: Path | None = args.file
    if target is not None and "/" in target:
        if path is not None:
            raise AgentError("name the envelope file once: as the target or with --file")
        path = Path(target)
        target = None
    if path is not None:
        if target is not None:
            raise AgentError("an envelope file is checked against --commit REV, not a target")
        with path.open("rb") as handle:
            data = handle.read(MAX_ENVELOPE_BYTES + 1)
        return data, repository.commit(args.commit or "HEAD")
    if args.commit is not None and target is not None:
        raise AgentError("name the commit once: as the target or with --commit")
    commit = repository.commit(target or args.commit or "HEAD")
    note = repository.note(commit)
    if note is None:
        raise AgentError(f"commit {commit[:12]} has no note under {NOTES_REF}")
    return note, commit


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

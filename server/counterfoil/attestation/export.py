"""Exporting a commit's evidence, and which runs a note already carries: the one place the
terminal and the daemon both call."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import AgentError
from ..receipts.signing import load_signer
from .dsse import pae, parse_envelope, sign_envelope
from .git import NOTES_REF, Repository, repository_of
from .hand_changes import hand_changes
from .signers import AllowedSigner
from .statement import build_statement, read_verified_log, review_rejections


@dataclass(frozen=True)
class ExportedEvidence:
    commit: str
    where: str  # the note's ref, or the file written
    runs: tuple[str, ...]
    effects: int
    review_rejected: tuple[str, ...]  # commands whose reviewed changes were rejected
    files: int
    validation: str
    unreceipted: tuple[str, ...]  # paths the commit changed by hand: bytes no receipt wrote


def export_evidence(
    root: Path, log: Path, revision: str = "HEAD", runs: list[str] | None = None,
    out: Path | None = None,
) -> ExportedEvidence:  # fmt: skip
    """Sign the runs behind `revision` with the person's key and add them as a note on it (or
    write the envelope to `out`); refused in one sentence when anything does not verify."""
    signer = load_signer()
    if signer is None:
        raise AgentError("exporting evidence needs your signing key: counterfoil keys init")
    repository, prefix = repository_of(root)
    commit = repository.commit(revision)
    verified = read_verified_log(log, signer.public_key)
    statement = build_statement(verified, log, repository, prefix, commit, runs)
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode("utf-8")
    envelope = sign_envelope(payload, signer).to_json() + "\n"
    if out is not None:
        try:
            out.write_text(envelope, encoding="utf-8")
        except OSError as error:
            raise AgentError(f"could not write {out}: {error.strerror}") from None
        where = str(out)
    else:
        repository.add_note(commit, envelope)
        where = NOTES_REF
    predicate = statement["predicate"]
    return ExportedEvidence(
        commit=commit,
        where=where,
        runs=tuple(run["run_id"] for run in predicate["runs"]),
        effects=len(predicate["effects"]),
        review_rejected=tuple(review_rejections(predicate["effects"])),
        files=len(statement["subject"]),
        validation=predicate["validation"]["status"],
        unreceipted=tuple(
            change.path for change in hand_changes(predicate, repository, commit, ())
        ),
    )


_exported_cache: dict[tuple[Path, str], frozenset[str]] = {}


def exported_runs(root: Path) -> frozenset[str]:
    """The runs that a note signed by this person's key names: what the receipts view marks as
    exported. A note signed by anyone else, or that does not parse, counts for nothing."""
    signer = load_signer()
    if signer is None:
        return frozenset()
    try:
        repository, _ = repository_of(root)
        notes = repository.git("rev-parse", "--verify", "--quiet", NOTES_REF).decode().strip()
    except AgentError:
        return frozenset()
    key = (repository.top, notes + signer.public_key)
    if key not in _exported_cache:
        _exported_cache[key] = _runs_in_notes(repository, AllowedSigner("me", signer.public_key))
    return _exported_cache[key]


def _runs_in_notes(repository: Repository, me: AllowedSigner) -> frozenset[str]:
    runs: set[str] = set()
    listing = repository.git("notes", "--ref", NOTES_REF, "list").decode("ascii")
    for line in listing.splitlines():
        note_id = line.split()[0]
        try:
            envelope = parse_envelope(repository.git("cat-file", "blob", note_id))
        except AgentError:
            continue
        message = pae(envelope.payload_type, envelope.payload)
        if not any(me.verifies(message, item.sig) for item in envelope.signatures):
            continue
        try:
            predicate = json.loads(envelope.payload)["predicate"]
            runs.update(str(run["run_id"]) for run in predicate["runs"])
        except (ValueError, KeyError, TypeError):
            continue
    return frozenset(runs)


__all__ = ["ExportedEvidence", "export_evidence", "exported_runs"]

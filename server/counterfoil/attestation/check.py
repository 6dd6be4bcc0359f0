"""Verifying an evidence envelope offline: the signature and who made it, the Statement's shape,
the commit's bytes, every path the commit changed by hand, and that the validation ran, and
passed, after the last change.

Every check runs and each failure is one finding; the bundle holds only when there are none.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import AgentError
from .dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, pae, parse_envelope
from .git import Repository
from .hand_changes import SYMLINK, HandChange, hand_changes
from .signers import AllowedSigner
from .statement import PREDICATE_TYPE, STATEMENT_TYPE, validation_entry

HEX64 = re.compile(r"[0-9a-f]{64}")


def signature_findings(
    envelope: Envelope, allowed: list[AllowedSigner]
) -> tuple[AllowedSigner | None, list[str]]:
    """(the allowed signer whose key verifies the payload, or None; the findings)."""
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
        return None, [f"the payload type is {envelope.payload_type!r}, not {IN_TOTO_PAYLOAD_TYPE}"]
    message = pae(envelope.payload_type, envelope.payload)
    for signature in envelope.signatures:
        for signer in allowed:
            if signer.verifies(message, signature.sig):
                return signer, []
    known = {signer.keyid for signer in allowed}
    if not any(signature.keyid in known for signature in envelope.signatures):
        return None, ["no signature is by a key in the allowed signers"]
    return None, ["the signature does not verify (the payload or the signature was changed)"]


def statement_of(envelope: Envelope) -> tuple[dict[str, Any] | None, list[str]]:
    try:
        value = json.loads(envelope.payload)
    except (ValueError, RecursionError):
        return None, ["the payload is not a JSON Statement"]
    findings: list[str] = []
    if not isinstance(value, dict):
        return None, ["the payload is not a JSON Statement"]
    if value.get("_type") != STATEMENT_TYPE:
        findings.append(f"the Statement's _type is not {STATEMENT_TYPE}")
    if value.get("predicateType") != PREDICATE_TYPE:
        findings.append(f"the predicateType is not {PREDICATE_TYPE}")
    subjects, predicate = value.get("subject"), value.get("predicate")
    if not isinstance(subjects, list) or not all(_subject_ok(item) for item in subjects):
        findings.append("the Statement's subject is not a list of {name, digest: {sha256}}")
    if not isinstance(predicate, dict) or not all(
        isinstance(predicate.get(key), kind)
        for key, kind in (
            ("commit", str),
            ("effects", list),
            ("runs", list),
            ("files", list),
            ("validation", dict),
            ("root", str),
        )
    ):
        findings.append("the predicate lacks its commit, runs, effects, files or validation")
    return (value if not findings else None), findings


def _subject_ok(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("name"), str)
        and isinstance(item.get("digest"), dict)
        and isinstance(item["digest"].get("sha256"), str)
        and HEX64.fullmatch(item["digest"]["sha256"]) is not None
    )


def commit_findings(statement: dict[str, Any], repository: Repository, commit: str) -> list[str]:
    """The commit the Statement names, and each subject against the commit's own bytes."""
    predicate = statement["predicate"]
    findings: list[str] = []
    if predicate["commit"] != commit:
        findings.append(
            f"the evidence is for commit {str(predicate['commit'])[:12]}, not {commit[:12]}"
        )
    names = [item["name"] for item in statement["subject"]]
    try:
        blobs = repository.blobs(commit, names)
    except AgentError as error:
        return [*findings, str(error)]
    for item in statement["subject"]:
        data = blobs[item["name"]]
        if data is None:
            findings.append(f"{shown(item['name'])}: the commit holds no such file")
        elif hashlib.sha256(data).hexdigest() != item["digest"]["sha256"]:
            findings.append(f"{shown(item['name'])}: the committed bytes are not the ones attested")
    return findings


def validation_findings(predicate: dict[str, Any]) -> list[str]:
    """Recomputed from the effects by the verdict's own rule: a validation that ran on the
    root's bytes after the last change, and passed; and the predicate says the same."""
    effects = predicate["effects"]
    if not all(isinstance(effect, dict) for effect in effects):
        return ["an effect in the predicate is malformed"]
    recomputed = validation_entry(effects)
    status, command = recomputed["status"], recomputed["call_id"]
    findings: list[str] = []
    claimed = predicate["validation"].get("status")
    if claimed != status:
        findings.append(f"the predicate says validation {shown(claimed)}, its effects {status}")
    if recomputed["after"] is None:
        return findings
    if status == "stale":
        how = (
            "changed files itself"
            if command == recomputed["after"]
            else "ran before the last change"
        )
        findings.append(
            f"the validation is stale: {shown(command)} {how}, and nothing checked it since"
        )
    elif status == "not_run":
        findings.append("no validation ran after the last change")
    elif status == "failed":
        exit_status = recomputed["exit_status"]
        findings.append(f"the validation after the last change failed (exit status {exit_status})")
    return findings


def shown(path: object) -> str:
    """A path as one line: control characters escaped, so a name cannot forge a finding."""
    return json.dumps(str(path))[1:-1]


@dataclass(frozen=True)
class BundleCheck:
    """What a verification found: the Statement when it parsed, the allowed signer whose key
    signed it, every path the commit changed by hand (with the pattern that accepts it, or
    None), and every finding; no findings means the evidence holds."""

    statement: dict[str, Any] | None
    signer: AllowedSigner | None
    hand_changes: tuple[HandChange, ...]
    findings: tuple[str, ...]


def verify_envelope(
    data: bytes,
    allowed: list[AllowedSigner],
    repository: Repository,
    commit: str,
    allow_hand_changes: tuple[str, ...] = (),
) -> BundleCheck:
    """Every check on `data` as the evidence for `commit`; each failure is one finding."""
    try:
        envelope = parse_envelope(data)
    except AgentError as error:
        return BundleCheck(None, None, (), (str(error),))
    signer, findings = signature_findings(envelope, allowed)
    statement, shape = statement_of(envelope)
    findings += shape
    if statement is None:
        return BundleCheck(None, signer, (), tuple(findings))
    findings += commit_findings(statement, repository, commit)
    findings += validation_findings(statement["predicate"])
    try:
        changes = hand_changes(statement["predicate"], repository, commit, allow_hand_changes)
    except AgentError as error:
        return BundleCheck(statement, signer, (), (*findings, str(error)))
    findings += [hand_change_finding(change) for change in changes if not change.accepted]
    return BundleCheck(statement, signer, changes, tuple(findings))


def hand_change_finding(change: HandChange) -> str:
    if change.read_by is not None:
        return (
            f"{shown(change.path)}: changed by hand, and validation command {shown(change.read_by)} "
            "reads or runs it, so the check that passed is not the one committed"
        )
    if change.mode == SYMLINK:
        return (
            f"{shown(change.path)}: committed as a symlink, and a receipt writes only a regular "
            "file, so the validation did not run on it (its target text is not the file's bytes)"
        )
    if change.mode is not None:
        return (
            f"{shown(change.path)}: committed with mode {change.mode}, which no receipt set "
            "(a receipt writes a regular file and keeps an executable bit, never sets one)"
        )
    if change.removed:
        return (
            f"{shown(change.path)}: removed by hand, not by any receipt, so the validation did "
            "not run without it (a team accepts such a path with --allow-hand-changes)"
        )
    return (
        f"{shown(change.path)}: the committed bytes were not written by any receipt, so the "
        "validation did not run on them (a team accepts such a file with --allow-hand-changes)"
    )

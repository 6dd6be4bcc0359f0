"""Verifying an evidence envelope offline: the signature, the Statement's shape, the commit's
bytes, and that the validation ran, and passed, after the last change.

Every check runs and each failure is one finding; the bundle holds only when there are none.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..errors import AgentError
from .dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, pae, parse_envelope
from .git import Repository
from .signers import AllowedSigner
from .statement import PREDICATE_TYPE, STATEMENT_TYPE

HEX64 = re.compile(r"[0-9a-f]{64}")


def signature_findings(envelope: Envelope, allowed: list[AllowedSigner]) -> list[str]:
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
        return [f"the payload type is {envelope.payload_type!r}, not {IN_TOTO_PAYLOAD_TYPE}"]
    message = pae(envelope.payload_type, envelope.payload)
    for signature in envelope.signatures:
        for signer in allowed:
            if signer.verifies(message, signature.sig):
                return []
    known = {signer.keyid for signer in allowed}
    if not any(signature.keyid in known for signature in envelope.signatures):
        return ["no signature is by a key in the allowed signers"]
    return ["the signature does not verify (the payload or the signature was changed)"]


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
    """Each subject against the commit's own bytes, and the files no receipt wrote."""
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
    for name in names:
        data = blobs[name]
        expected = next(
            item["digest"]["sha256"] for item in statement["subject"] if item["name"] == name
        )
        if data is None:
            findings.append(f"{_shown(name)}: the commit holds no such file")
        elif hashlib.sha256(data).hexdigest() != expected:
            findings.append(f"{_shown(name)}: the committed bytes are not the ones attested")
    for entry in predicate["files"]:
        if (
            isinstance(entry, dict)
            and entry.get("in_commit")
            and not entry.get("written_by_receipt")
        ):
            findings.append(
                f"{_shown(entry.get('path'))}: the committed bytes were not written by any "
                "receipt, so the validation did not run on them"
            )
    return findings


def validation_findings(predicate: dict[str, Any]) -> list[str]:
    """Recomputed from the effects, in order: the last command after the last change, exit 0."""
    last_change, last_command = -1, None
    for index, effect in enumerate(predicate["effects"]):
        if not isinstance(effect, dict):
            return ["an effect in the predicate is malformed"]
        if effect.get("changed"):
            last_change = index
        if effect.get("tool") == "run_command" and effect.get("argv") is not None:
            last_command = (index, effect)
    if last_change < 0:
        return []
    if last_command is None or last_command[0] < last_change:
        return ["no validation ran after the last change"]
    if last_command[1].get("exit_status") != 0:
        status = last_command[1].get("exit_status")
        return [f"the validation after the last change failed (exit status {status})"]
    return []


def _shown(path: object) -> str:
    """A path as one line: control characters escaped, so a name cannot forge a finding."""
    return json.dumps(str(path))[1:-1]


def verify_envelope(
    data: bytes, allowed: list[AllowedSigner], repository: Repository, commit: str | None
) -> tuple[dict[str, Any] | None, list[str]]:
    """(the Statement when it parsed, every finding); no findings means the evidence holds."""
    try:
        envelope = parse_envelope(data)
    except AgentError as error:
        return None, [str(error)]
    findings = signature_findings(envelope, allowed)
    statement, shape = statement_of(envelope)
    findings += shape
    if statement is None:
        return None, findings
    predicate = statement["predicate"]
    try:
        target = repository.commit(commit or predicate["commit"])
    except AgentError as error:
        return statement, [*findings, f"the commit is not in this repository ({error})"]
    findings += commit_findings(statement, repository, target)
    findings += validation_findings(predicate)
    return statement, findings

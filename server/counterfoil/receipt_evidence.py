"""What a receipt records beyond the course's six fields: when, in which run, which bytes, what
ran, and who approved exactly what they were shown (the types: `receipt_fields.py`)."""

from __future__ import annotations

import getpass
import os
from datetime import UTC, datetime

from .commands.runner import CommandResult
from .proposals import (
    ChangeSetProposal,
    CommandProposal,
    EditProposal,
    ToolProposal,
    sha256_hex,
)
from .receipt_fields import ApprovalRecord, ReceiptEvidence
from .receipts import canonical_json
from .receipts.content import ObjectStream


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def shown_digest(proposal: ToolProposal) -> str:
    """The digest of exactly what the person was shown: the proposed bytes of a file, or a
    command's argv, cwd and timeout as canonical JSON."""
    if isinstance(proposal, CommandProposal):
        shown = {
            "argv": list(proposal.argv),
            "cwd": proposal.cwd,
            "timeout_seconds": proposal.timeout_seconds,
        }
        return sha256_hex(canonical_json(shown).encode("utf-8"))
    if isinstance(proposal, ChangeSetProposal):
        files = [
            [item.path, item.expected_sha256, item.content_sha256, item.mode]
            for item in proposal.files
        ]
        return sha256_hex(canonical_json(files).encode("utf-8"))
    return proposal.proposed_sha256 or ""


def approval_record(proposal: ToolProposal, via: str) -> ApprovalRecord:
    return ApprovalRecord(
        decision="approved",
        by=os_user(),
        via=via,
        shown_sha256=shown_digest(proposal),
        modified=False,
    )


def file_evidence(proposal: EditProposal) -> ReceiptEvidence:
    """The bytes before and after (either may be none: a new file, a removal)."""
    new_folders = proposal.new_folders if proposal.reverts is None else ()  # a revert removes them
    return ReceiptEvidence(
        base_sha256=proposal.base_sha256,
        result_sha256=None if proposal.removes_file else proposal.proposed_sha256,
        created_folders=tuple(new_folders) or None,
    )


def command_evidence(
    proposal: CommandProposal, outcome: CommandResult, duration: float, output: ObjectStream
) -> ReceiptEvidence:
    """A command's facts; its full output (up to the cap) is already in the content store."""
    return ReceiptEvidence(
        argv=tuple(proposal.argv),
        cwd=proposal.cwd,
        exit_status=outcome.status,
        timed_out=True if outcome.timed_out else None,
        duration_seconds=round(duration, 3),
        output_sha256=output.finish(),
        output_truncated=output.truncated,
    )

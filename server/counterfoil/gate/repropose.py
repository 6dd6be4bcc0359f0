"""The model's edit proposed again on the file as the person left it.

A person may change a file while its proposal waits (typing with autosave on, pressing Save).
That proposal no longer applies, but it need not become a No: when the model's `old` text still
occurs exactly once, the same edit applied to the new bytes is a fresh proposal, shown and
approved like any other. Only `edit_file` can be proposed again; a whole-file write would
overwrite what the person just did.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import AgentError
from ..proposals import EditProposal, ToolProposal, sha256_hex
from .edits import apply_edit

# What the model reads after an approval of its edit applied to the person's newer bytes.
REPROPOSED_NOTE = " (the person changed the file while your proposal waited; your edit was applied to their version)"


def can_repropose(proposal: ToolProposal) -> bool:
    return (
        isinstance(proposal, EditProposal)
        and proposal.action.tool == "edit_file"
        and proposal.reverts is None
    )


def reproposed(proposal: EditProposal, current: bytes) -> EditProposal:
    """`proposal`'s edit applied to `current`, the file's bytes now; an AgentError when the
    model's `old` text no longer occurs exactly once (then there is nothing to propose)."""
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError:
        raise AgentError("file is not valid UTF-8") from None
    arguments = proposal.action.arguments
    try:
        proposed = apply_edit(text, arguments["old"], arguments["new"])
    except AgentError:
        raise AgentError("the file changed and the edit no longer applies") from None
    return replace(
        proposal,
        base_text=text,
        base_sha256=sha256_hex(current),
        proposed_text=proposed,
        proposed_sha256=sha256_hex(proposed.encode("utf-8")),
    )

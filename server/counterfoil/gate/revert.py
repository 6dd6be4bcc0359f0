"""Reverting a file effect from its receipt: what must be on disk now, and what goes back.
(A command's revert is planned from its `tree_changes`, in `commands/tree/restore.py`.)

A revert is an ordinary effect (the Workspace proposes, asks, checks digests and records it);
this module only reads the receipt and the content store to say what that effect is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..commands.tree.restore import can_revert_command
from ..errors import AgentError
from ..receipts import EffectReceipt

REVERT_TOOL = "revert"
DRIFT_ERROR = "file changed since the receipt"


@dataclass(frozen=True)
class RevertPlan:
    """`expected_sha256`: what the file must hold now (None: it must not exist).
    `restore`: the bytes to put back (None: the effect created the file, so remove it)."""

    call_id: str
    path: str
    expected_sha256: str | None
    restore: bytes | None
    restore_sha256: str | None
    created_folders: tuple[str, ...] = ()  # the effect's new folders, removed when empty


def plan_revert(
    receipt: EffectReceipt | None, call_id: str, load_object: Callable[[str], bytes | None]
) -> RevertPlan:
    """What reverting `call_id` means, or an AgentError saying why it cannot be reverted."""
    if receipt is None:
        raise AgentError(f"no receipt for {call_id}")
    refusal = _file_refusal(receipt)
    if refusal is not None:
        raise AgentError(refusal)
    evidence = receipt.evidence
    before_sha256 = evidence.base_sha256
    restore: bytes | None = None
    if before_sha256 is not None:
        restore = load_object(before_sha256)
        if restore is None:
            raise AgentError(f"the content store no longer holds the bytes before {call_id}")
    return RevertPlan(
        call_id=call_id,
        path=receipt.changed_artifacts[0],
        expected_sha256=evidence.result_sha256,
        restore=restore,
        restore_sha256=before_sha256,
        created_folders=_folders(evidence.created_folders or (), receipt.changed_artifacts[0]),
    )


def _file_refusal(receipt: EffectReceipt) -> str | None:
    """Why a file effect's receipt alone says it cannot be reverted (None: it records what a
    revert needs)."""
    call_id = receipt.tool_call_id
    if receipt.exit_state != "ok" or len(receipt.changed_artifacts) != 1:
        return f"{call_id} changed no file, so there is nothing to revert"
    if not receipt.evidence.writes_file:
        return f"the receipt of {call_id} does not record the bytes before it (an older log)"
    return None


def reverts_as_command(receipt: EffectReceipt) -> bool:
    """A command's receipt is reverted from its `tree_changes`, any other from its digests."""
    return receipt.tool == "run_command"


def revertable(receipt: EffectReceipt) -> bool:
    """Whether revert can undo what `receipt` records, by the same checks a revert makes of the
    receipt: a file effect that changed one file and kept its digests, or a command whose
    changes that reached the root include a file it can put back. What the disk and the
    content store hold now is checked when the revert is proposed, so it may still refuse."""
    if reverts_as_command(receipt):
        return can_revert_command(receipt.evidence)
    return _file_refusal(receipt) is None


def _folders(value: tuple[str, ...], path: str) -> tuple[str, ...]:
    """The receipt's `created_folders` when each is a folder above `path` (so a revert can only
    ever remove the file's own parents); anything else is none."""
    parts = PurePosixPath(path).parts[:-1]
    parents = ["/".join(parts[: index + 1]) for index in range(len(parts))]
    if value and list(value) == parents[len(parents) - len(value) :]:
        return value
    return ()

"""`counterfoil/selectBranch`: one branch of a forked run selected in the daemon's root, each
change asked through `counterfoil/confirm` like any effect (receipts approved `editor,
selecting branch …`). The branches are listed by `branches/listing.py`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...gate.workspace import Workspace
from ...protocol.branches import (
    SelectBranchResult,
)
from ...receipts import ReceiptStore
from ...sessions.record import CheckpointRefused
from ...sessions.store import SessionStore


def select_answer(
    name: str, open_workspace: Callable[[], tuple[Workspace, Callable[[], None]]], confirm: Any
) -> SelectBranchResult:
    """Select branch `name` in the daemon's root: its receipts go to the client as they are
    recorded; the selection writes without `allowWrites`, as a revert does (the person asked)."""
    from ...branches.selection import SelectionStopped, select_named_branch
    from .jobs import WorkspaceUnavailable

    def answer(
        outcome: Any,
        detail: str | None,
        applied: tuple[str, ...] = (),
        discarded: tuple[str, ...] = (),
    ) -> SelectBranchResult:
        return SelectBranchResult(
            branch=name,
            outcome=outcome,
            detail=detail,
            applied=list(applied),
            discarded=list(discarded),
        )

    try:
        workspace, unsubscribe = open_workspace()
    except WorkspaceUnavailable as error:
        return answer("refused", error.message)
    store: ReceiptStore = workspace.receipt_store
    assert store.path is not None  # the daemon's workspace always has its log
    policy = replace(workspace.policy, allow_writes=True)
    try:
        selection = select_named_branch(
            SessionStore(store.path), policy.root, name, policy, store, confirm, via="editor"
        )
    except CheckpointRefused as error:
        return answer("refused", str(error))
    except SelectionStopped as error:
        return answer("stopped", str(error))
    finally:
        unsubscribe()
    return answer("selected", None, selection.results, selection.discarded)

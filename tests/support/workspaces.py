"""The one way the tests build a `Workspace` by hand: a policy on a real folder, an answer to
every proposal, and (when asked) a receipt log inside the folder. Only the tests of the
constructor itself call `Workspace(…)` (tests/architecture/test_test_layout.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from counterfoil import ReceiptStore, ToolPolicy, Workspace
from counterfoil.gate.workspace_setup import WorkspaceSetup


def log_path(root: Path) -> Path:
    folder = root / ".counterfoil"
    folder.mkdir(exist_ok=True)
    return folder / "receipts.jsonl"


def make_workspace(
    where: Path | ToolPolicy,
    *,
    answer: object = None,
    confirm_proposal: Callable[[Any], object] | None = None,
    confirm_tool: Callable[[Any], object] | None = None,
    store: ReceiptStore | None = None,
    logged: bool = False,
    run_id: str | None = None,
    approval_via: str = "cli",
    stop_commands: threading.Event | None = None,
    read_digests: dict[str, str] | None = None,
    setup: WorkspaceSetup | None = None,
    **policy: Any,
) -> Workspace:
    """A workspace on `where`: a folder (with `ToolPolicy(where, **policy)`) or a policy made
    already. The person answers every proposal with `answer` (None: nobody is asked, so every
    effect is a No), or `confirm_proposal` answers them, or the course's `confirm_tool` is asked
    for each call. The receipts go to `store`, or with `logged` to
    `root/.counterfoil/receipts.jsonl`, else they stay in memory. The rest of what it is set
    up with (its MCP tools, rules, limits, hooks) is `setup`."""
    if isinstance(where, ToolPolicy):
        if policy:
            raise TypeError("policy options go with a folder, not with a policy made already")
        tool_policy, root = where, where.root
    else:
        tool_policy, root = ToolPolicy(where, **policy), where
    if answer is not None:
        if confirm_proposal is not None:
            raise TypeError("answer and confirm_proposal both answer the proposals: pass one")
        confirm_proposal = lambda _proposal: answer
    if logged:
        if store is not None:
            raise TypeError("logged and store both name the receipt log: pass one")
        store = ReceiptStore(log_path(root))
    return Workspace(
        tool_policy,
        confirm_tool,
        store,
        setup=replace(
            setup or WorkspaceSetup(),
            confirm_proposal=confirm_proposal,
            stop_commands=stop_commands,
            run_id=run_id,
            approval_via=approval_via,
            read_digests=read_digests,
        ),
    )

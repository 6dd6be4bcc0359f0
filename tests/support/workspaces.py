"""The one way the tests build a `Workspace` by hand: a policy on a real folder, an answer to
every proposal, and (when asked) a receipt log inside the folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from counterfoil import ReceiptStore, ToolPolicy, Workspace


def log_path(root: Path) -> Path:
    folder = root / ".counterfoil"
    folder.mkdir(exist_ok=True)
    return folder / "receipts.jsonl"


def make_workspace(
    root: Path,
    *,
    answer: bool | None = None,
    logged: bool = False,
    run_id: str | None = None,
    approval_via: str = "cli",
    **policy: Any,
) -> Workspace:
    """`ToolPolicy(root, **policy)` behind a workspace. `answer` is the person's answer to every
    proposal (None: nobody is asked, so every effect is a No); `logged` keeps the receipts in
    `root/.counterfoil/receipts.jsonl` instead of in memory."""
    confirm = None if answer is None else (lambda _proposal: answer)
    return Workspace(
        ToolPolicy(root, **policy),
        receipt_store=ReceiptStore(log_path(root)) if logged else None,
        confirm_proposal=confirm,
        run_id=run_id,
        approval_via=approval_via,
    )

"""`counterfoil/receipts`: what the receipts tree shows, the receipts grouped by the runs that
made them (this daemon's, and every run's own record on disk)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .receipts import Receipt
    from .runs import RunRecord
    from .sessions import StoredRunRecord


@dataclass(frozen=True, kw_only=True)
class ReceiptsResult:
    receipts: list[Receipt]
    logPath: str | None
    error: str | None
    runs: list[RunRecord]
    records: list[StoredRunRecord]  # every run's own record on disk, this daemon's or not
    exportedRuns: list[str]  # runs a git note signed by this person's key already carries

"""Receipts of effects, kept in an append-only, hash-chained JSONL log.

Each receipt's id is the SHA-256 of its six course fields, so an edited line is caught. Each
line also carries `chain_sha256`, a link over the line before's link and this line (its whole
canonical JSON when it carries evidence), so a deleted, inserted or reordered line is caught.
A head record beside the log catches lines removed from its end; signatures, when a key
exists, catch a forged line whose chain was recomputed. Course-format lines still load.
"""

from __future__ import annotations

from .errors import ReceiptLogError, ReceiptNotRecorded
from .record import (
    CHAIN_KEY,
    EVIDENCE_FIELDS,
    EXIT_STATES,
    RECEIPT_FIELDS,
    EffectReceipt,
    canonical_json,
    chain_link,
)
from .store import ReceiptStore
from .verify import ReceiptLogReport, verify_receipt_log

__all__ = [
    "CHAIN_KEY",
    "EVIDENCE_FIELDS",
    "EXIT_STATES",
    "RECEIPT_FIELDS",
    "EffectReceipt",
    "ReceiptLogError",
    "ReceiptLogReport",
    "ReceiptNotRecorded",
    "ReceiptStore",
    "canonical_json",
    "chain_link",
    "verify_receipt_log",
]

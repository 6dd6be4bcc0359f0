"""The head record beside a log: how long the log was, and its last link, after the last append.

A chain alone cannot tell a log whose last lines were removed from a shorter log; the head can.
It is replaced atomically (a whole new file renamed over the old) after every append and every
call id handed out; it is not fsynced on its own, so after a power loss it may lag the log, and
lines after the head are then checked by the chain alone until the next append rewrites it.
A signed log's head is signed with the same key, so a log cut short with its head recomputed
fails `verify --public-key`. A log without a head is a log from before heads existed;
`chain.head_problem` says when that is accepted (never once a line carries evidence).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ReceiptLogError
from .logfile import read_small, replace_atomically

HEAD_SUFFIX = ".head"
HEAD_SIGNED_PREFIX = b"counterfoil receipt head "


def head_path(log: Path) -> Path:
    return log.with_name(log.name + HEAD_SUFFIX)


@dataclass(frozen=True)
class LogHead:
    count: int
    lines: int
    length: int
    link: str
    chained: bool
    signed_by: str | None
    next_call: int
    version: int = 1
    signature: str | None = None  # by `signed_by`, over `signed_message()`

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode("utf-8") + b"\n"

    def signed_message(self) -> bytes:
        """What a signed log's head signature is over: every field but the signature."""
        fields = asdict(self)
        del fields["signature"]
        return HEAD_SIGNED_PREFIX + json.dumps(fields, sort_keys=True).encode("utf-8")


def read_head(log: Path) -> LogHead | None:
    data = read_small(head_path(log))
    if data is None:
        return None
    try:
        value = json.loads(data)
        head = LogHead(**value)
    except (ValueError, TypeError, RecursionError):
        raise ReceiptLogError("the head record beside the log is malformed") from None
    numbers = (head.count, head.lines, head.length, head.next_call)
    if (
        not all(isinstance(item, int) and item >= 0 for item in numbers)
        or not isinstance(head.link, str)
        or not isinstance(head.signed_by, (str, type(None)))
        or not isinstance(head.signature, (str, type(None)))
    ):
        raise ReceiptLogError("the head record beside the log is malformed")
    return head


def write_head(log: Path, head: LogHead) -> None:
    replace_atomically(head_path(log), head.to_bytes())

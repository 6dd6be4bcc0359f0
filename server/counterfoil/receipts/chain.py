"""Reading and checking log lines: ids bound to contents, one chain, signatures in order.

Lines are read in bounded chunks, so a huge line costs a line error, not the memory to hold it;
every hostile line (deep nesting, an integer of thousands of digits, bad UTF-8) is a line
error, never an exception that escapes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError
from .errors import ReceiptLogError
from .head import LogHead
from .record import (
    CHAIN_KEY,
    COURSE_KEYS,
    PUBLIC_KEY_KEY,
    SIGNATURE_KEY,
    EffectReceipt,
    chain_link,
    check_fields,
    line_digest,
    payload_digest,
)

MAX_LINE_BYTES = 8 << 20
READ_CHUNK_BYTES = 1 << 20
_DECODER = json.JSONDecoder()
AUTO_CALL_ID = re.compile(r"call-([1-9][0-9]{0,17})")

SignatureCheck = Callable[[str, str, str], None]  # (public_key, link, signature); raises


@dataclass
class ChainState:
    """What is known of a log up to `consumed` bytes: its last link and its receipts' places."""

    link: str = ""
    chained: bool = False
    signed_by: str | None = None
    evidence_seen: bool = False
    count: int = 0
    lines: int = 0
    consumed: int = 0
    highest_auto: int = 0
    index: dict[str, int] | None = field(default_factory=dict)

    @classmethod
    def from_head(cls, head: LogHead) -> ChainState:
        return cls(
            link=head.link,
            chained=head.chained,
            signed_by=head.signed_by,
            evidence_seen=head.chained,
            count=head.count,
            lines=head.lines,
            consumed=head.length,
            highest_auto=max(0, head.next_call - 1),
            index=None,
        )

    def head(self, next_call: int) -> LogHead:
        return LogHead(
            count=self.count,
            lines=self.lines,
            length=self.consumed,
            link=self.link,
            chained=self.chained,
            signed_by=self.signed_by,
            next_call=max(next_call, self.highest_auto + 1),
        )


def auto_number(tool_call_id: str) -> int:
    match = AUTO_CALL_ID.fullmatch(tool_call_id)
    return int(match.group(1)) if match else 0


def iter_lines(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes | None, int, bool]]:
    """(offset, line without its newline or None when too long, length, ends with a newline)."""
    offset = position = start
    pending = b""
    pending_length = 0
    oversized = False
    while position < end:
        chunk = os.pread(fd, min(READ_CHUNK_BYTES, end - position), position)
        if not chunk:
            break
        position += len(chunk)
        parts = chunk.split(b"\n")
        tail = parts.pop()
        if parts:
            first = parts[0]
            length = pending_length + len(first) + 1
            too_long = oversized or length > MAX_LINE_BYTES
            yield offset, None if too_long else pending + first, length, True
            offset += length
            for part in parts[1:]:
                length = len(part) + 1
                yield offset, part if length <= MAX_LINE_BYTES else None, length, True
                offset += length
            pending, pending_length, oversized = tail, len(tail), False
        else:
            pending_length += len(tail)
            if not oversized:
                pending += tail
        if pending_length > MAX_LINE_BYTES:
            oversized, pending = True, b""
    if pending_length:
        yield offset, None if oversized else pending, pending_length, False


def parse_line(raw: bytes, number: int, complete: bool) -> dict[str, Any]:
    try:
        record = _DECODER.decode(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        if not complete:
            raise ReceiptLogError(
                "the last line is incomplete: the log ends mid-receipt "
                "(an append was interrupted); no receipt after it is lost",
                number,
            ) from None
        raise ReceiptLogError("receipt is malformed (not a JSON object)", number) from None
    if not isinstance(record, dict):
        raise ReceiptLogError("receipt is malformed (not a JSON object)", number)
    return record


def read_receipt_at(fd: int, offset: int) -> EffectReceipt:
    """The receipt on the (already verified) line that starts at `offset`."""
    for _, raw, _, complete in iter_lines(fd, offset, os.fstat(fd).st_size):
        if raw is None:
            break
        return receipt_from_line(raw, complete)
    raise ReceiptLogError("receipt log changed under its index")


def receipt_from_line(raw: bytes, complete: bool) -> EffectReceipt:
    """The receipt a verified line holds, without the chain link and signature around it."""
    record = parse_line(raw, 0, complete)
    for key in (CHAIN_KEY, SIGNATURE_KEY, PUBLIC_KEY_KEY):
        record.pop(key, None)
    return EffectReceipt.from_dict(record)


def take_line(
    state: ChainState,
    fd: int,
    offset: int,
    raw: bytes | None,
    length: int,
    complete: bool,
    check_signature: SignatureCheck | None = None,
) -> EffectReceipt | None:
    """Verify one line against what came before and take it into `state`; the receipt it
    adds (None for a blank line or a repeat of a receipt already taken)."""
    state.lines += 1
    number = state.lines
    if raw is None:
        raise ReceiptLogError(f"receipt line is longer than {MAX_LINE_BYTES} bytes", number)
    if not raw.strip():
        state.consumed += length
        return None
    record = parse_line(raw, number, complete)
    stored_link = record.pop(CHAIN_KEY, None)
    signature = record.pop(SIGNATURE_KEY, None)
    public_key = record.pop(PUBLIC_KEY_KEY, None)
    try:
        check_fields(record)
        if payload_digest(record) != record["receipt_id"]:
            raise AgentError("receipt digest does not match its contents")
        if public_key is not None and not isinstance(public_key, str):
            raise AgentError("receipt public key is malformed")
    except AgentError as error:
        raise ReceiptLogError(str(error), number) from None
    except (ValueError, RecursionError):
        raise ReceiptLogError("receipt is malformed (not a JSON object)", number) from None
    carries_evidence = (
        len(record) > len(COURSE_KEYS) or signature is not None or public_key is not None
    )
    digest = line_digest(raw, record, not carries_evidence or stored_link is None)
    if digest is None:
        raise ReceiptLogError("receipt line is not in the form it was written in", number)
    link = chain_link(state.link, digest)
    if stored_link is None:
        if state.chained:
            raise ReceiptLogError("receipt chain link is missing after a chained line", number)
        if carries_evidence:
            raise ReceiptLogError("receipt chain link is missing from a line with evidence", number)
    elif stored_link != link:
        raise ReceiptLogError(
            "receipt chain does not match the line before "
            "(a line was deleted, inserted or reordered)",
            number,
        )
    else:
        state.chained = True
    if signature is not None or public_key is not None:
        if not isinstance(signature, str) or public_key is None:
            raise ReceiptLogError("receipt signature is malformed", number)
        if check_signature is not None:
            try:
                check_signature(public_key, link, signature)
            except AgentError as error:
                raise ReceiptLogError(str(error), number) from None
        state.signed_by = public_key
    elif state.signed_by is not None:
        raise ReceiptLogError("receipt is unsigned in a signed log", number)
    assert state.index is not None
    tool_call_id = record["tool_call_id"]
    known = state.index.get(tool_call_id)
    added: EffectReceipt | None = None
    if known is None:
        state.index[tool_call_id] = offset
        state.count += 1
        if tool_call_id.startswith("call-"):
            state.highest_auto = max(state.highest_auto, auto_number(tool_call_id))
        added = EffectReceipt.from_dict(record)
    else:
        if read_receipt_at(fd, known) != EffectReceipt.from_dict(record):
            raise ReceiptLogError("tool call id already has a different receipt", number)
    state.evidence_seen = state.evidence_seen or carries_evidence
    state.link = link
    state.consumed += length
    return added


def take_lines(
    state: ChainState,
    fd: int,
    end: int,
    check_signature: SignatureCheck | None = None,
    on_boundary: Callable[[ChainState], None] | None = None,
    on_receipt: Callable[[EffectReceipt], None] | None = None,
) -> None:
    """Verify every line from `state.consumed` to `end`; `on_receipt` gets each receipt once
    its line has verified."""
    for offset, raw, length, complete in iter_lines(fd, state.consumed, end):
        added = take_line(state, fd, offset, raw, length, complete, check_signature)
        if on_receipt is not None and added is not None:
            on_receipt(added)
        if on_boundary is not None:
            on_boundary(state)


def head_matches_prefix(fd: int, head: LogHead, size: int) -> bool:
    """Whether the log still ends, at the head's length, with the head's last line: its
    contents recomputed against the link stored on the line before give the head's link.
    Then the lines before need not be read again; a full verify still reads them all."""
    if head.length > size or not head.chained:
        return head.length == 0 and head.count == 0 and head.lines == 0
    if head.length == 0:
        return head.count == 0
    window = 4096
    while True:
        start = max(0, head.length - window)
        data = os.pread(fd, head.length - start, start)
        if not data.endswith(b"\n"):
            return False
        lines = data[:-1].split(b"\n")
        if len(lines) >= 3 or start == 0:
            break
        if window >= 2 * MAX_LINE_BYTES:
            return False
        window *= 4
    try:
        last = json.loads(lines[-1])
        previous_link = json.loads(lines[-2]).get(CHAIN_KEY, "") if len(lines) > 1 else ""
        stored = last.pop(CHAIN_KEY, None)
        plain = SIGNATURE_KEY not in last and PUBLIC_KEY_KEY not in last
        last.pop(SIGNATURE_KEY, None)
        if last.pop(PUBLIC_KEY_KEY, None) != head.signed_by:
            return False
        check_fields(last)
        if payload_digest(last) != last["receipt_id"]:
            return False
        digest = line_digest(lines[-1], last, plain and len(last) == len(COURSE_KEYS))
    except (ValueError, RecursionError, AttributeError, TypeError):
        return False
    if not isinstance(previous_link, str) or digest is None:
        return False
    return bool(stored == head.link == chain_link(previous_link, digest))


def head_problem(head: LogHead | None, state: ChainState, at_head: ChainState | None) -> str | None:
    """Why a fully read log disagrees with its head record, or None.

    A log with no head is accepted only when none of its lines carries evidence or a signature:
    logs written before heads existed (course format, or chained lines alone) still verify.
    A log that ever carried evidence was written with a head, so a missing head means it was
    removed.
    """
    if head is None:
        if state.evidence_seen or state.signed_by is not None:
            return "the head record beside the log is missing (the log was written with one)"
        return None
    if state.consumed < head.length or state.count < head.count:
        return (
            "the log is shorter than its head record: receipts were removed from its end "
            f"(the head records {head.count}, the log holds {state.count})"
        )
    if at_head is None or at_head.link != head.link:
        return "the log does not match its head record (its end was rewritten)"
    if head.chained and not state.chained:
        return "the head record says the log is chained, but its lines carry no chain links"
    if head.signed_by is not None and state.signed_by is None:
        return "the head record says the log is signed, but its lines carry no signatures"
    return signed_head_problem(head, at_head.signed_by)


def signed_head_problem(head: LogHead, signed_by: str | None) -> str | None:
    """Why the head cannot be the one the log's signer wrote: a signed log's head names the
    same key and carries a signature (checked against the key by `verify --public-key`)."""
    if head.signed_by != signed_by:
        return "the head record does not name the key the log is signed with (it was rewritten)"
    if signed_by is not None and head.signature is None:
        return "the head record of a signed log is not signed (it was rewritten)"
    return None

"""Receipts of effects, kept in an append-only, hash-chained JSONL log.

Each receipt's id is the SHA-256 of its own fields, so an edited line is caught. Each line
also carries `chain_sha256`, a digest of the line before's link and this receipt's id, so a
deleted, inserted or reordered line is caught too. Lines in the course's plain `to_dict()`
format (no link) still load; their link is derived, so a later chained line covers them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import AgentError

RECEIPT_FIELDS = (
    "tool_call_id",
    "tool",
    "arguments",
    "exit_state",
    "result",
    "changed_artifacts",
)
CHAIN_KEY = "chain_sha256"
EXIT_STATES = ("ok", "error")


@dataclass(frozen=True)
class EffectReceipt:
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    exit_state: str
    result: str
    changed_artifacts: tuple[str, ...] = ()

    def payload(self) -> dict[str, Any]:
        return {
            "tool_call_id": self.tool_call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "exit_state": self.exit_state,
            "result": self.result,
            "changed_artifacts": list(self.changed_artifacts),
        }

    @cached_property
    def receipt_id(self) -> str:
        encoded = json.dumps(self.payload(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(encoded.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {"receipt_id": self.receipt_id, **self.payload()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EffectReceipt:
        """Rebuild a receipt and check that its id matches its contents."""
        if not isinstance(data, dict) or set(data) != {"receipt_id", *RECEIPT_FIELDS}:
            raise AgentError("receipt is malformed")
        artifacts = data["changed_artifacts"]
        if (
            not all(isinstance(data[key], str) for key in ("tool_call_id", "tool", "result"))
            or not isinstance(data["arguments"], dict)
            or data["exit_state"] not in EXIT_STATES
            or not isinstance(artifacts, list)
            or not all(isinstance(item, str) for item in artifacts)
        ):
            raise AgentError("receipt is malformed")
        receipt = cls(
            tool_call_id=data["tool_call_id"],
            tool=data["tool"],
            arguments=data["arguments"],
            exit_state=data["exit_state"],
            result=data["result"],
            changed_artifacts=tuple(artifacts),
        )
        if receipt.receipt_id != data["receipt_id"]:
            raise AgentError("receipt digest does not match its contents")
        return receipt


def chain_link(previous_link: str, receipt_id: str) -> str:
    """The link of a line: it commits to every line before it."""
    return hashlib.sha256(f"{previous_link}:{receipt_id}".encode("ascii")).hexdigest()


class ReceiptLogError(AgentError):
    """A receipt log that does not verify; `line` is the 1-based number of the first bad line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


@dataclass(frozen=True)
class ReceiptLogReport:
    ok: bool
    count: int
    error: str | None = None
    line: int | None = None


@dataclass
class _ChainState:
    """What a store knows of its log: receipts in order and by id, the last link, bytes read."""

    receipts: list[EffectReceipt] = field(default_factory=list)
    by_id: dict[str, EffectReceipt] = field(default_factory=dict)
    link: str = ""
    chained: bool = False
    consumed: int = 0
    lines: int = 0

    def add(self, receipt: EffectReceipt) -> None:
        self.receipts.append(receipt)
        self.by_id[receipt.tool_call_id] = receipt


def _read_lines(data: bytes, state: _ChainState) -> None:
    """Verify and take in the log bytes that follow `state.consumed`."""
    offset = 0
    while offset < len(data):
        newline = data.find(b"\n", offset)
        end = len(data) if newline < 0 else newline + 1
        raw = data[offset:end]
        state.lines += 1
        number = state.lines
        if not raw.strip():
            offset = end
            state.consumed += len(raw)
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            if newline < 0:
                raise ReceiptLogError(
                    "the last line is incomplete: the log ends mid-receipt "
                    "(an append was interrupted); no receipt after it is lost",
                    number,
                ) from None
            raise ReceiptLogError("receipt is malformed (not a JSON object)", number) from None
        if not isinstance(record, dict):
            raise ReceiptLogError("receipt is malformed (not a JSON object)", number)
        stored_link = record.pop(CHAIN_KEY, None)
        try:
            receipt = EffectReceipt.from_dict(record)
        except AgentError as error:
            raise ReceiptLogError(str(error), number) from None
        link = chain_link(state.link, receipt.receipt_id)
        if stored_link is None:
            if state.chained:
                raise ReceiptLogError("receipt chain link is missing after a chained line", number)
        elif stored_link != link:
            raise ReceiptLogError(
                "receipt chain does not match the line before "
                "(a line was deleted, inserted or reordered)",
                number,
            )
        else:
            state.chained = True
        known = state.by_id.get(receipt.tool_call_id)
        if known is not None and known != receipt:
            raise ReceiptLogError("tool call id already has a different receipt", number)
        if known is None:
            state.add(receipt)
        state.link = link
        state.consumed += len(raw)
        offset = end


def _read_log_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as error:
        raise ReceiptLogError(f"could not load receipt log: {error.strerror or error}") from None


def verify_receipt_log(path: str | Path) -> ReceiptLogReport:
    """Check a whole log without raising: how many receipts, or the first broken line."""
    state = _ChainState()
    try:
        _read_lines(_read_log_bytes(Path(path)), state)
    except ReceiptLogError as error:
        return ReceiptLogReport(False, len(state.receipts), str(error), error.line)
    return ReceiptLogReport(True, len(state.receipts))


class ReceiptStore:
    """Receipts by tool call id, in memory or in an append-only JSONL log.

    A receipt counts only once its line is written and fsynced. Appends hold an exclusive
    lock on the log and first take in lines other processes appended, so the chain stays
    one chain and two writers never interleave.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._state = _ChainState()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[EffectReceipt], None]] = []
        if self.path is not None:
            _read_lines(_read_log_bytes(self.path), self._state)

    def get(self, tool_call_id: str) -> EffectReceipt | None:
        with self._lock:
            return self._state.by_id.get(tool_call_id)

    def receipts(self) -> tuple[EffectReceipt, ...]:
        with self._lock:
            return tuple(self._state.receipts)

    def __len__(self) -> int:
        with self._lock:
            return len(self._state.receipts)

    def subscribe(self, callback: Callable[[EffectReceipt], None]) -> Callable[[], None]:
        """Call `callback(receipt)` after each new receipt is stored; returns an unsubscribe."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def put(self, receipt: EffectReceipt) -> EffectReceipt:
        if not isinstance(receipt, EffectReceipt):
            raise AgentError("receipt must be an EffectReceipt")
        with self._lock:
            if self.path is not None:
                stored = self._append(receipt)
            else:
                stored = self._admit(receipt)
            if stored is None:
                return self._state.by_id[receipt.tool_call_id]
        for listener in list(self._listeners):
            listener(receipt)
        return receipt

    def _admit(self, receipt: EffectReceipt) -> EffectReceipt | None:
        """None when this exact receipt is already stored."""
        known = self._state.by_id.get(receipt.tool_call_id)
        if known == receipt:
            return None
        if known is not None:
            raise AgentError("tool call id already has a different receipt")
        if self.path is None:
            self._state.add(receipt)
        return receipt

    def _append(self, receipt: EffectReceipt) -> EffectReceipt | None:
        assert self.path is not None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
        except OSError as error:
            raise AgentError(f"could not open receipt log: {error.strerror or error}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._catch_up(fd)
            if self._admit(receipt) is None:
                return None
            link = chain_link(self._state.link, receipt.receipt_id)
            line = json.dumps({**receipt.to_dict(), CHAIN_KEY: link}, separators=(",", ":"))
            data = line.encode("utf-8") + b"\n"
            if self._state.consumed and not self._ends_with_newline(fd):
                data = b"\n" + data
            os.write(fd, data)
            os.fsync(fd)
            self._state.add(receipt)
            self._state.link = link
            self._state.chained = True
            self._state.consumed += len(data)
            self._state.lines += 1
            return receipt
        finally:
            os.close(fd)

    def _catch_up(self, fd: int) -> None:
        """Take in lines another process appended since this store last read the log."""
        size = os.fstat(fd).st_size
        if size < self._state.consumed:
            raise AgentError("receipt log shrank while open; refusing to append")
        if size > self._state.consumed:
            data = os.pread(fd, size - self._state.consumed, self._state.consumed)
            _read_lines(data, self._state)

    def _ends_with_newline(self, fd: int) -> bool:
        return os.pread(fd, 1, self._state.consumed - 1) == b"\n"

"""The receipt store: receipts by tool call id, in memory or in an append-only JSONL log.

A receipt counts only once its line is written completely and fsynced. Every step that touches
the log holds its lock (with a timeout) and first takes in what other processes appended, so
the chain stays one chain, two writers never interleave and two processes never hand out the
same call id. Opening trusts the head record when the log still ends with the head's link, and
verifies only what was appended after it (`checked` says so; `verify.read_receipt_log` reads
every line); the store keeps the log's places (id -> offset), not its receipts. A log with
evidence and no head is refused, and a signed log takes no effect this process cannot sign.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from ..errors import AgentError
from . import content
from .chain import (
    ChainState,
    auto_number,
    head_matches_prefix,
    iter_lines,
    read_receipt_at,
    receipt_from_line,
    signed_head_problem,
    take_lines,
)
from .errors import ReceiptLogError
from .guard import LogGuard
from .head import head_path, read_head, write_head
from .hold import HOLDS_FOLDER, SESSIONS_FOLDER, ObjectHold
from .identity import PinnedLog
from .logfile import LOCK_TIMEOUT_SECONDS, append_durably, locked_log
from .own_folder import make_own_folder, own_folder
from .record import EffectReceipt, encode_line
from .signing import SignatureChecker, Signer, config_dir, load_signer

AUTO = object()


class ReceiptStore:
    """Receipts by tool call id; `path=None` keeps them in memory only."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        signer: Signer | None | object = AUTO,
        lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.lock_timeout = lock_timeout
        self._signer = signer
        self._state = ChainState()
        self._memory: dict[str, EffectReceipt] = {}
        self._order: list[str] = []
        self._next_call = 1
        self._lock = threading.Lock()
        self._listeners: list[Callable[[EffectReceipt], None]] = []
        self._hold: ObjectHold | None = None
        self._trusted_lines = 0
        self._guards: dict[Path | None, LogGuard] = {}
        self._pinned = None if self.path is None else PinnedLog(self.path)
        if self.path is not None:
            with self._locked_log(write=False) as fd:
                self._catch_up_or_check_missing(fd)

    def _locked_log(
        self, *, write: bool, create: bool = True
    ) -> AbstractContextManager[int | None]:
        """The log held under its lock, pinned to the folder and file first seen (a
        store kept in memory has none)."""
        assert self.path is not None
        return locked_log(
            self.path, write=write, timeout=self.lock_timeout, create=create, pinned=self._pinned
        )

    # Reading

    def get(self, tool_call_id: str) -> EffectReceipt | None:
        with self._lock:
            if self.path is None:
                return self._memory.get(tool_call_id)
            with self._locked_log(write=False) as fd:
                if fd is None:
                    return None
                offset = self._index(fd).get(tool_call_id)
                return None if offset is None else read_receipt_at(fd, offset)

    def receipts(self) -> tuple[EffectReceipt, ...]:
        return tuple(self.iter_receipts())

    def iter_receipts(self) -> Iterator[EffectReceipt]:
        """Receipts in log order, read from the file (up to what this store has verified)."""
        if self.path is None:
            with self._lock:
                yield from [self._memory[key] for key in self._order]
            return
        with self._lock:
            end = self._state.consumed
        with self._locked_log(write=False) as fd:
            if fd is None:
                return
            seen: set[str] = set()
            for _, raw, _, complete in iter_lines(fd, 0, end):
                if raw is None or not raw.strip():
                    continue
                receipt = receipt_from_line(raw, complete)
                if receipt.tool_call_id not in seen:
                    seen.add(receipt.tool_call_id)
                    yield receipt

    def __len__(self) -> int:
        with self._lock:
            return len(self._memory) if self.path is None else self._state.count

    @property
    def checked(self) -> str:
        """What opening checked, for a person: every line, or only those after the head."""
        with self._lock:
            trusted, lines = self._trusted_lines, self._state.lines
        if self.path is not None and not lines and not os.path.lexists(self.path):
            return f"no receipt log yet at {self.path} (it is written with the first receipt)"
        if not trusted:
            return f"all {_lines(lines)} of the log checked"
        return (
            f"the {_lines(lines - trusted)} after the head record checked, the {trusted} before "
            f"it not (counterfoil receipts verify {self.path} checks every line)"
        )

    def guards(self, path: Path, root: Path | None = None) -> bool:
        """Whether `path` is the log, its head, its content store or (with `root`, when the
        log's folder lies inside it) anything in the log's folder."""
        if self.path is None:
            return False
        guard = self._guards.get(root)
        if guard is None:
            guard = self._guards[root] = LogGuard.of(self.path, root)
        return guard.hides(path)

    def own_paths(self, *, with_folder: bool = False) -> tuple[Path, ...]:
        """The log, its head, its content store, its holds and its runs: what a confined command
        may not write (and `with_folder`, the log's folder, which a snapshot leaves out and a
        sandbox makes read-only whole where it is not the root itself)."""
        if self.path is None:
            return ()
        log = self.path.resolve()
        folder = log.parent
        state = own_folder(log)
        own: tuple[Path, ...]
        if state == folder:
            own = (
                log,
                head_path(log),
                folder / content.OBJECTS_FOLDER,
                folder / HOLDS_FOLDER,
                folder / SESSIONS_FOLDER,
            )
        else:
            own = (log, head_path(log), state)
        return (*own, folder) if with_folder else own

    def subscribe(self, callback: Callable[[EffectReceipt], None]) -> Callable[[], None]:
        """Call `callback(receipt)` after each new receipt is stored; returns an unsubscribe."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    # Recording first: an id and a writable log before the effect

    def reserve_call_id(self) -> str:
        """A call id no process has used on this log, recorded in its head so it is never
        handed out again, even when the call is then denied or fails."""
        with self._lock:
            if self.path is None:
                while f"call-{self._next_call}" in self._memory:
                    self._next_call += 1
                number = self._next_call
                self._next_call += 1
                return f"call-{number}"
            with self._locked_log(write=True, create=False) as fd:
                self._catch_up_or_check_missing(fd)
                self._require_signer()
                head = read_head(self.path)
                number = max(self._state.highest_auto, (head.next_call - 1) if head else 0) + 1
                self._state.highest_auto = number
                self._write_head(number + 1)
                return f"call-{number}"

    def check_writable(self) -> None:
        """Raise unless a receipt could be appended now: the log is a regular file in a real
        folder, its lock can be taken, and it verifies up to its end."""
        if self.path is None:
            return
        with self._lock, self._locked_log(write=True) as fd:
            assert fd is not None
            self._catch_up(fd)
            self._require_signer()

    def require_signer(self) -> None:
        """Raise unless this process can sign what it would append (a signed log stays
        signed by its key); an unsigned log needs nothing."""
        if self.path is None:
            return
        with self._lock, self._locked_log(write=False) as fd:
            self._catch_up_or_check_missing(fd)
            if self._state.signed_by is not None:
                self._require_signer()

    def keep_object(self, data: bytes, *, durable: bool = True) -> str:
        """Store bytes a receipt will name; returns their SHA-256. They are held from
        `receipts gc` while this store is open (`durable`: see `store_object`)."""
        if self.path is None:
            return hashlib.sha256(data).hexdigest()
        return content.store_object(
            make_own_folder(self.path), data, self._object_hold(), durable=durable
        )

    def sync_objects(self, digests: Iterable[str]) -> None:
        """Make objects kept with `durable=False` durable, before a receipt names them."""
        if self.path is not None:
            content.sync_objects(own_folder(self.path), digests)

    def output_stream(self, limit: int = content.OUTPUT_LIMIT_BYTES) -> content.ObjectStream:
        """Where a command's output goes as it runs: its first `limit` bytes become one object
        (only hashed when the store is in memory)."""
        if self.path is None:
            return content.ObjectStream(None, limit)
        return content.ObjectStream(make_own_folder(self.path), limit, self._object_hold())

    def _object_hold(self) -> ObjectHold:
        assert self.path is not None
        with self._lock:
            if self._hold is None:
                self._hold = ObjectHold(make_own_folder(self.path))
                weakref.finalize(self, self._hold.close)
            return self._hold

    def close(self) -> None:
        """Let go of what this store holds in the content store (also done when it is
        garbage-collected or the process ends)."""
        with self._lock:
            hold, self._hold = self._hold, None
        if hold is not None:
            hold.close()

    # Writing

    def put(self, receipt: EffectReceipt) -> EffectReceipt:
        if not isinstance(receipt, EffectReceipt):
            raise AgentError("receipt must be an EffectReceipt")
        with self._lock:
            stored = self._put_memory(receipt) if self.path is None else self._append(receipt)
        if stored is None:
            existing = self.get(receipt.tool_call_id)
            assert existing is not None
            return existing
        for listener in list(self._listeners):
            listener(receipt)
        return receipt

    def _put_memory(self, receipt: EffectReceipt) -> EffectReceipt | None:
        known = self._memory.get(receipt.tool_call_id)
        if known == receipt:
            return None
        if known is not None:
            raise AgentError("tool call id already has a different receipt")
        self._memory[receipt.tool_call_id] = receipt
        self._order.append(receipt.tool_call_id)
        return receipt

    def _append(self, receipt: EffectReceipt) -> EffectReceipt | None:
        assert self.path is not None
        with self._locked_log(write=True) as fd:
            assert fd is not None
            self._catch_up(fd)
            index = self._index(fd)
            known = index.get(receipt.tool_call_id)
            if known is not None:
                if read_receipt_at(fd, known) == receipt:
                    return None
                raise AgentError("tool call id already has a different receipt")
            signer = self._require_signer()
            if read_head(self.path) is None:  # so a log with evidence never lacks its head
                self._write_head(0)
            encoded, link = encode_line(receipt, self._state.link, signer)
            data = encoded + b"\n"
            start = self._state.consumed
            if start and os.pread(fd, 1, start - 1) != b"\n":
                data = b"\n" + data
            append_durably(fd, data, start)
            state = self._state
            state.lines += 1
            index[receipt.tool_call_id] = start + (1 if data.startswith(b"\n") else 0)
            state.count += 1
            state.highest_auto = max(state.highest_auto, auto_number(receipt.tool_call_id))
            state.link = link
            state.chained = True
            state.evidence_seen = state.evidence_seen or bool(receipt.evidence.as_record())
            state.signed_by = signer.public_key if signer is not None else state.signed_by
            state.consumed += len(data)
            head = read_head(self.path)
            self._write_head(head.next_call if head else 0)
            return receipt

    # The log's state

    def _signer_now(self) -> Signer | None:
        if self._signer is AUTO:
            self._signer = load_signer()
        return self._signer  # type: ignore[return-value]

    def _require_signer(self) -> Signer | None:
        """The signer, when it can continue this log; a signed log without its key here is
        refused before anything happens, and so is a head its key did not sign."""
        assert self.path is not None
        signer = self._signer_now()
        signed_by = self._state.signed_by
        if signed_by is None:
            return signer
        if signer is None or signer.public_key != signed_by:
            found = "no signing key" if signer is None else "a different signing key"
            raise ReceiptLogError(
                f"the receipt log is signed with {signed_by}, and this process has {found} "
                f"(in {config_dir()}); nothing was done, so the log stays verifiable"
            )
        head = read_head(self.path)
        if head is not None and head.length == self._state.consumed:
            try:
                SignatureChecker(signed_by).check_head(
                    head.signed_by, head.signed_message(), head.signature
                )
            except AgentError as error:
                raise ReceiptLogError(str(error)) from None
        return signer

    def _write_head(self, next_call: int) -> None:
        assert self.path is not None
        head = self._state.head(next_call)
        if head.signed_by is not None:
            signer = self._signer_now()
            if signer is None or signer.public_key != head.signed_by:
                raise ReceiptLogError("could not write the head record: no key to sign it with")
            head = replace(head, signature=signer.sign_bytes(head.signed_message()))
        try:
            write_head(self.path, head)
        except OSError as error:
            raise ReceiptLogError(f"could not write the head record: {error.strerror}") from None

    def _catch_up_or_check_missing(self, fd: int | None) -> None:
        """Take in the log when it exists; when it does not, its head must not list receipts."""
        if fd is not None:
            self._catch_up(fd)
        else:
            self._check_missing_log()

    def _check_missing_log(self) -> None:
        assert self.path is not None
        head = read_head(self.path)
        if head is not None and head.length > 0:
            raise ReceiptLogError(
                f"the receipt log is missing, but its head record lists {head.count} receipts"
            )

    def _catch_up(self, fd: int) -> None:
        """Take in what other processes appended: trust a head that matches the file, and
        verify every line after what is already known."""
        assert self.path is not None
        size = os.fstat(fd).st_size
        state = self._state
        if size < state.consumed:
            raise ReceiptLogError("receipt log shrank while open; refusing to append")
        head = read_head(self.path)
        if (
            head is not None
            and head.length > state.consumed
            and head_matches_prefix(fd, head, size)
        ):
            problem = signed_head_problem(head, head.signed_by)
            if problem is not None:
                raise ReceiptLogError(problem)
            self._state = state = ChainState.from_head(head)
            self._trusted_lines = head.lines
        if size > state.consumed:
            self._index(fd)
            take_lines(state, fd, size)
        if head is None and (state.evidence_seen or state.signed_by is not None):
            raise ReceiptLogError(
                "the head record beside the log is missing (the log was written with one: "
                "receipts may have been removed from its end); refusing to open it"
            )
        if head is not None and head.length > state.consumed:
            raise ReceiptLogError(
                "the log is shorter than its head record: receipts were removed from its end "
                f"(the head records {head.count}, the log holds {state.count})"
            )
        at_head = head is not None and state.consumed == size == head.length
        if (
            at_head
            and head is not None
            and (head.link != state.link or (head.chained and not state.chained))
        ):
            raise ReceiptLogError("the log does not match its head record (its end was rewritten)")
        if at_head and head is not None:
            problem = signed_head_problem(head, state.signed_by)
            if problem is not None:
                raise ReceiptLogError(problem)

    def _index(self, fd: int) -> dict[str, int]:
        """Id -> offset of each receipt's line up to what is verified, built when first
        needed."""
        state = self._state
        if state.index is None:
            index: dict[str, int] = {}
            for offset, raw, _, complete in iter_lines(fd, 0, state.consumed):
                if raw is None or not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                    tool_call_id = record["tool_call_id"]
                except (ValueError, RecursionError, KeyError, TypeError):
                    raise ReceiptLogError("receipt log changed under its head record") from None
                index.setdefault(tool_call_id, offset)
            state.index = index
        return state.index


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"

"""The run's own record: `<run folder>/decisions.jsonl`, beside its checkpoint.

The receipt log records effects only; this records the run around them: its goal, who ran it
and how, when it started and ended with its verdict, and every decision on every call id —
approved (its receipt says what it did), rejected with the person's reason, refused with the
gate's error, failed, interrupted, settled after an interruption. Each line carries a link over
the line before (and a signature when a signing key exists, as receipts do), so a line edited,
removed or reordered is caught by `receipts verify`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..files import write_all
from ..receipt_evidence import os_user, utc_now
from ..receipts.record import EffectReceipt
from ..receipts.signing import Signer, load_signer
from ..receipts.verify import tree_results
from ..verdict import EFFECT_STATES, EffectOutcome
from .store import SessionStore

DECISIONS_FILE = "decisions.jsonl"
LINK_KEY = "link"
SIGNATURE_KEYS = ("signature", "public_key")


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def entry_link(previous: str, entry: dict[str, Any]) -> str:
    body = {key: value for key, value in entry.items() if key not in (LINK_KEY, *SIGNATURE_KEYS)}
    digest = hashlib.sha256(_canonical(body)).hexdigest()
    return hashlib.sha256(f"{previous}:{digest}".encode("ascii")).hexdigest()


def outcome_entry(outcome: EffectOutcome, state: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": "decision",
        "call_id": outcome.call_id,
        "tool": outcome.tool,
        "state": state or outcome.state,
        "reason": outcome.reason,
    }
    if outcome.path is not None:
        entry["path"] = outcome.path
    if outcome.argv is not None:
        entry["argv"] = list(outcome.argv)
    return entry


def recorded_outcomes(
    entries: Iterable[dict[str, Any]], receipt_of: Callable[[str], EffectReceipt | None]
) -> list[EffectOutcome]:
    """What became of each call the record decided, with what its receipt shows it did: the
    inverse of `outcome_entry`, so that a resumed run's verdict judges the whole run. A call
    left open (interrupted) is not among them: it is asked again."""
    outcomes: list[EffectOutcome] = []
    for entry in entries:
        state, call_id = entry.get("state"), entry.get("call_id")
        if entry.get("kind") != "decision" or state not in EFFECT_STATES:
            continue
        if not isinstance(call_id, str):
            continue
        receipt = receipt_of(call_id) if state == "approved" else None
        evidence = receipt.evidence if receipt is not None else {}
        argv = entry.get("argv")
        written = receipt is not None and bool(receipt.changed_artifacts)
        outcomes.append(
            EffectOutcome(
                call_id,
                str(entry.get("tool", "")),
                state,
                path=entry.get("path"),
                argv=tuple(argv) if isinstance(argv, list) else None,
                sha256=evidence.get("result_sha256") if written else None,
                exit_status=evidence.get("exit_status"),
                timed_out=bool(evidence.get("timed_out")),
                reason=entry.get("reason"),
                tree_changes=tuple(tree_results(evidence.get("tree_changes"))),
            )
        )
    return outcomes


class DecisionLog:
    """One run's record, appended line by line, each fsynced."""

    def __init__(self, sessions: SessionStore, run_id: str) -> None:
        self.sessions = sessions
        self.run_id = run_id
        self.path = sessions.run_folder(run_id) / DECISIONS_FILE
        self._signer: Signer | None | bool = False  # False: not loaded yet

    def started(
        self, goal: str, via: str, resumed: bool, model_identity: dict[str, Any] | None = None
    ) -> None:
        """The run's start; `model_identity` (`ModelIdentity.as_record()`) names its model."""
        entry: dict[str, Any] = {"kind": "resumed" if resumed else "started", "goal": goal}
        entry.update(by=os_user(), via=via)
        if model_identity is not None:
            entry["model_identity"] = model_identity
        self.append(entry)

    def ended(self, state: str, reason: str | None, verdict: dict[str, Any]) -> None:
        self.append({"kind": state, "reason": reason, "verdict": verdict})

    def decided(self, entries: Iterable[dict[str, Any]]) -> None:
        for entry in entries:
            self.append(entry)

    def append(self, entry: dict[str, Any]) -> None:
        lines = read_entries(self.path)
        previous = lines[-1].get(LINK_KEY, "") if lines else ""
        entry = {**entry, "run_id": self.run_id, "time": utc_now()}
        link = entry_link(str(previous), entry)
        entry[LINK_KEY] = link
        signer = self._signer_now()
        if signer is not None:
            entry.update(signature=signer.sign(link), public_key=signer.public_key)
        data = _canonical(entry) + b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _signer_now(self) -> Signer | None:
        if self._signer is False:
            try:
                self._signer = load_signer()
            except (AgentError, ImportError):
                self._signer = None
        return self._signer  # type: ignore[return-value]


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The record's lines; an unreadable line is returned as `{"unreadable": text}`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        entries.append(value if isinstance(value, dict) else {"unreadable": line[:80]})
    return entries


def verify_decisions(path: Path, check_signature: Any = None) -> tuple[int, str | None]:
    """(lines, the first problem) of one run's record: each link over the line before, and
    each signature when `check_signature` is given."""
    previous = ""
    entries = read_entries(path)
    for number, entry in enumerate(entries, start=1):
        if "unreadable" in entry or entry.get(LINK_KEY) != entry_link(previous, entry):
            return number - 1, f"line {number} does not match its link"
        if check_signature is not None:
            signature, public_key = entry.get("signature"), entry.get("public_key")
            if not isinstance(signature, str) or not isinstance(public_key, str):
                return number - 1, f"line {number} is not signed"
            try:
                check_signature(public_key, entry[LINK_KEY], signature)
            except AgentError as error:
                return number - 1, f"line {number}: {error}"
        previous = entry[LINK_KEY]
    return len(entries), None


def verify_run_records(log_path: Path, check_signature: Any = None) -> tuple[int, list[str]]:
    """(records checked, one line per problem) for every run beside `log_path`."""
    sessions = SessionStore(log_path)
    problems: list[str] = []
    checked = 0
    for run_id in sessions.run_ids():
        path = sessions.run_folder(run_id) / DECISIONS_FILE
        if not path.exists():
            continue
        checked += 1
        _, problem = verify_decisions(path, check_signature)
        if problem is not None:
            problems.append(f"the record of run {run_id}: {problem}")
    return checked, problems


def unreceipted_decisions(log_path: Path, receipted: set[str]) -> list[str]:
    """A line for each call id the runs decided on that has no receipt: why it has none."""
    sessions = SessionStore(log_path)
    lines: list[str] = []
    for run_id in sessions.run_ids():
        for entry in read_entries(sessions.run_folder(run_id) / DECISIONS_FILE):
            call_id = entry.get("call_id")
            if entry.get("kind") != "decision" or call_id in receipted:
                continue
            target = entry.get("path", entry.get("argv", ""))
            reason = entry.get("reason")
            why = f": {reason}" if reason else ""
            lines.append(
                f"{call_id}  {entry.get('time', '-')}  run {run_id[:12]}  "
                f"{entry.get('tool', ''):<11} {entry.get('state')} {target}{why}"
            )
    return lines


def note_settled(sessions: SessionStore, run_id: str, call_id: str, outcome: str) -> None:
    with contextlib.suppress(OSError, AgentError):
        DecisionLog(sessions, run_id).append(
            {"kind": "settled", "call_id": call_id, "outcome": outcome}
        )

"""The run's own record: `<run folder>/decisions.jsonl`, beside its checkpoint.

The receipt log records effects only; this records the run around them: its goal, who ran it
and how, when it started and ended with its verdict, and every decision on every call id —
approved (its receipt says what it did), rejected with the person's reason, refused with the
gate's error, failed, interrupted, settled after an interruption. Each line carries a link over
the line before (and a signature when a signing key exists, as receipts do), and its head,
`decisions.head` (rewritten atomically after each line, signed when a key exists), names the
last line's count and link: a line edited, removed, reordered or cut from the end, or a record
deleted while the log holds its run's receipts, is caught by `receipts verify`.
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
from ..files.files import write_all
from ..gate.rules import NO_RULES, RuleSet
from ..receipt_evidence import os_user, utc_now
from ..receipt_fields import ReceiptEvidence
from ..receipts.record import EffectReceipt
from ..receipts.signing import Signer, load_signer
from ..receipts.verify import applied_tree_results
from ..verdict import EFFECT_STATES, EffectOutcome
from .store import SessionStore

DECISIONS_FILE = "decisions.jsonl"
HEAD_FILE = "decisions.head"
LINK_KEY = "link"
SIGNATURE_KEYS = ("signature", "public_key")
RULES_KEY = "approval_rules"  # a start's (or resume's) rule set: {sha256, rules}


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
    if outcome.by_rule is not None:
        entry["by_rule"] = outcome.by_rule
    return entry


def recorded_outcomes(
    entries: Iterable[dict[str, Any]],
    receipt_of: Callable[[str], EffectReceipt | None],
    run_receipts: Iterable[EffectReceipt] = (),
) -> list[EffectOutcome]:
    """What became of each call the record decided, with what its receipt shows it did: the
    inverse of `outcome_entry`, so that a resumed run's verdict judges the whole run; then
    each receipt of the run the record never reached (the run stopped after the receipt and
    before its next checkpoint, or the receipt was recovered from an intent), in log order.
    A call left open (interrupted) is not among them: it is asked again."""
    outcomes: list[EffectOutcome] = []
    decided: set[str] = set()
    for entry in entries:
        state, call_id = entry.get("state"), entry.get("call_id")
        if entry.get("kind") != "decision" or not isinstance(call_id, str):
            continue
        decided.add(call_id)
        if state not in EFFECT_STATES:
            continue
        receipt = receipt_of(call_id) if state == "approved" else None
        argv = entry.get("argv")
        outcomes.append(
            _outcome(
                call_id,
                str(entry.get("tool", "")),
                state,
                receipt,
                path=entry.get("path"),
                argv=tuple(argv) if isinstance(argv, list) else None,
                reason=entry.get("reason"),
            )
        )
    for receipt in run_receipts:
        if receipt.tool_call_id in decided:
            continue
        decided.add(receipt.tool_call_id)
        path = receipt.arguments.get("path")
        outcomes.append(
            _outcome(
                receipt.tool_call_id,
                receipt.tool,
                "approved",
                receipt,
                path=path if isinstance(path, str) else None,
                argv=receipt.evidence.argv,
                reason=None,
            )
        )
    return outcomes


def _outcome(
    call_id: str,
    tool: str,
    state: Any,
    receipt: EffectReceipt | None,
    *,
    path: Any,
    argv: tuple[str, ...] | None,
    reason: Any,
) -> EffectOutcome:
    evidence = receipt.evidence if receipt is not None else ReceiptEvidence()
    written = receipt is not None and bool(receipt.changed_artifacts)
    return EffectOutcome(
        call_id,
        tool,
        state,
        path=path,
        argv=argv,
        sha256=evidence.result_sha256 if written else None,
        exit_status=evidence.exit_status,
        timed_out=evidence.timed_out is True,
        reason=reason,
        tree_changes=tuple(applied_tree_results(evidence)),
        review=None if evidence.review is None else evidence.review.decision,
        by_rule=None if evidence.approval is None else evidence.approval.rule,
    )


class DecisionLog:
    """One run's record, appended line by line, each fsynced."""

    def __init__(self, sessions: SessionStore, run_id: str) -> None:
        self.sessions = sessions
        self.run_id = run_id
        self.path = sessions.run_folder(run_id) / DECISIONS_FILE
        self._signer: Signer | None | bool = False  # False: not loaded yet

    def started(
        self,
        goal: str,
        via: str,
        resumed: bool,
        model: dict[str, Any] | None = None,
        model_identity: dict[str, Any] | None = None,
        approval_rules: RuleSet = NO_RULES,
    ) -> None:
        """The run's start (or a resume's), with the model it runs with (`model_record`),
        once loaded, that model's identity (`ModelIdentity.as_record()`), and the person's
        approval rules in force (their digest is what a rule-approved receipt names)."""
        entry: dict[str, Any] = {
            "kind": "resumed" if resumed else "started",
            "goal": goal,
            "by": os_user(),
            "via": via,
        }
        if model is not None:
            entry["model"] = model
        if model_identity is not None:
            entry["model_identity"] = model_identity
        if approval_rules.rules:
            entry[RULES_KEY] = {
                "sha256": approval_rules.sha256,
                "rules": approval_rules.as_record(),
            }
        self.append(entry)

    def steered(self, text: str) -> None:
        """The person's steering message a resume goes on with, as theirs: kept in the record
        (a checkpoint, which `sessions gc` removes, is not the run's story)."""
        self.append({"kind": "steered", "by": os_user(), "text": text})

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
        head: dict[str, Any] = {"count": len(lines) + 1, "link": link}
        if signer is not None:
            head.update(
                signature=signer.sign_bytes(head_message(head["count"], link)),
                public_key=signer.public_key,
            )
        self.sessions.write_file(self.run_id, HEAD_FILE, _canonical(head) + b"\n")

    def _signer_now(self) -> Signer | None:
        if self._signer is False:
            try:
                self._signer = load_signer()
            except (AgentError, ImportError):
                self._signer = None
        return self._signer  # type: ignore[return-value]


def model_record(spec: str) -> dict[str, Any]:
    """What a run's record says of its model: the spec it was loaded from (a model's fuller
    identity can be added here; `recorded_model` reads the spec back)."""
    return {"spec": spec}


def recorded_model(entries: Iterable[dict[str, Any]]) -> str | None:
    """The model spec the run last (re)started with, from its record; None if none is named."""
    spec = None
    for entry in entries:
        model = entry.get("model")
        if entry.get("kind") in ("started", "resumed") and isinstance(model, dict):
            value = model.get("spec")
            spec = value if isinstance(value, str) and value else spec
    return spec


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


def head_message(count: int, link: str) -> bytes:
    return f"counterfoil run record head {count} {link}".encode("ascii")


def read_head(path: Path) -> dict[str, Any] | None:
    """The head beside the record at `path`, or None when absent; `{}` when unreadable."""
    try:
        value = json.loads((path.parent / HEAD_FILE).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def verify_decisions(path: Path, check_signature: Any = None) -> tuple[int, str | None]:
    """(lines, the first problem) of one run's record: each link over the line before, each
    signature when `check_signature` is given, and its head (the record may not end before
    it; signed when the lines are, by `check_signature`'s key when given)."""
    checked, problem = _verify_lines(path, check_signature)
    if problem is not None:
        return checked, problem
    head = read_head(path)
    if head is None:
        return (0, None) if checked == 0 else (checked, "it has no head (decisions.head)")
    count, link = head.get("count"), head.get("link")
    entries = read_entries(path)
    if type(count) is not int or not isinstance(link, str) or count < 1:
        return checked, "its head is not readable"
    if len(entries) < count or entries[count - 1].get(LINK_KEY) != link:
        return checked, f"it ends before its head ({len(entries)} of {count} lines): it was cut"
    signed = any("signature" in entry for entry in entries)
    signature, public_key = head.get("signature"), head.get("public_key")
    if signed and not isinstance(signature, str):
        return checked, "its head is not signed (it was rewritten)"
    if check_signature is not None:
        try:
            check_signature.check_head(public_key, head_message(count, link), signature)
        except AgentError as error:
            return checked, f"its head: {error}"
    return checked, None


def _verify_lines(path: Path, check_signature: Any = None) -> tuple[int, str | None]:
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


def verify_run_records(
    log_path: Path, check_signature: Any = None, recorded_runs: Iterable[str] = ()
) -> tuple[int, list[str]]:
    """(records checked, one line per problem) for every run beside `log_path`;
    `recorded_runs`: the runs whose receipts say they keep a record (each must have one)."""
    sessions = SessionStore(log_path)
    problems: list[str] = []
    checked = 0
    runs = set(sessions.run_ids())
    for run_id in sorted(set(recorded_runs)):
        if not isinstance(run_id, str) or run_id not in runs or not _has_record(sessions, run_id):
            problems.append(f"run {run_id} left receipts but has no run record")
    for run_id in sorted(runs):
        path = sessions.run_folder(run_id) / DECISIONS_FILE
        if not _has_record(sessions, run_id):
            continue
        checked += 1
        _, problem = verify_decisions(path, check_signature)
        if problem is not None:
            problems.append(f"the record of run {run_id}: {problem}")
    return checked, problems


def _has_record(sessions: SessionStore, run_id: str) -> bool:
    folder = sessions.run_folder(run_id)
    return (folder / DECISIONS_FILE).exists() or (folder / HEAD_FILE).exists()


def recorded_run_ids(receipts: Iterable[EffectReceipt]) -> set[str]:
    """The runs whose receipts say they keep a record beside the log."""
    return {
        str(receipt.evidence.run_id) for receipt in receipts if receipt.evidence.run_record is True
    }


def unreceipted_decisions(log_path: Path, receipted: set[str]) -> tuple[list[str], list[str]]:
    """A line for each call id the runs decided on that has no receipt (why it has none), from
    the records that verify; and a problem for each record that does not (nothing of it is
    shown)."""
    sessions = SessionStore(log_path)
    lines: list[str] = []
    problems: list[str] = []
    for run_id in sessions.run_ids():
        path = sessions.run_folder(run_id) / DECISIONS_FILE
        _, problem = verify_decisions(path)
        if problem is not None:
            problems.append(f"the record of run {run_id}: {problem}")
            continue
        for entry in read_entries(path):
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
    return lines, problems


def note_settled(sessions: SessionStore, run_id: str, call_id: str, outcome: str) -> None:
    with contextlib.suppress(OSError, AgentError):
        DecisionLog(sessions, run_id).append(
            {"kind": "settled", "call_id": call_id, "outcome": outcome}
        )

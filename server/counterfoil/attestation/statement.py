"""The in-toto Statement for one commit: what the runs did, who approved it, and what holds.

It is built only from a receipt log that verifies (and the runs' records beside it): the
subject is every file the runs changed that the commit holds, by the SHA-256 of the committed
bytes; the predicate carries the runs, every effect with its approval, the verdict and the
validation, and the log's head link. A committed file whose bytes no receipt wrote is named as
such in `files`, never passed off as the agent's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..model_identity import identity_short
from ..receipts.chain import ChainState
from ..receipts.logfile import locked_log
from ..receipts.record import EffectReceipt
from ..receipts.signing import SignatureChecker
from ..receipts.verify import applied_tree_results, verify_open_log
from ..sessions.decisions import DECISIONS_FILE, RULES_KEY, read_entries, verify_run_records
from ..sessions.store import SessionStore
from ..verdict import EffectOutcome, compute_verdict
from .git import Repository

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "urn:counterfoil:run-evidence:v1"
NOT_WRITTEN = "committed bytes no receipt wrote"
FILE_TOOLS = ("write_file", "edit_file")


@dataclass(frozen=True)
class VerifiedLog:
    receipts: tuple[EffectReceipt, ...]
    link: str
    count: int
    signed_by: str | None


def read_verified_log(log: Path, public_key: str) -> VerifiedLog:
    """Every receipt of a log that verifies; a signed log must be signed by `public_key`, and
    the runs' records beside it must verify too. Anything else is refused in one sentence."""
    receipts: list[EffectReceipt] = []
    state, problem = _verify(log, None, receipts.append)
    if problem is None and state.signed_by is not None:
        receipts.clear()
        state, problem = _verify(log, SignatureChecker(public_key), receipts.append)
    if problem is not None:
        raise AgentError(f"the receipt log {log} does not verify: {problem}")
    checker = SignatureChecker(public_key) if state.signed_by is not None else None
    _, problems = verify_run_records(log, checker)
    if problems:
        raise AgentError(f"the receipt log {log} does not verify: {problems[0]}")
    return VerifiedLog(tuple(receipts), state.link, state.count, state.signed_by)


def _verify(
    log: Path, checker: SignatureChecker | None, on_receipt: Any
) -> tuple[ChainState, str | None]:
    with locked_log(log, write=False) as fd:
        if fd is None:
            return ChainState(), "there is no receipt log"
        state, problem, _ = verify_open_log(fd, log, checker, on_receipt)
    return state, problem


def run_ids(receipts: Iterable[EffectReceipt]) -> list[str]:
    """The runs of a log's receipts, in the order they first appear."""
    seen: dict[str, None] = {}
    for receipt in receipts:
        if receipt.evidence.run_id is not None:
            seen.setdefault(receipt.evidence.run_id)
    return list(seen)


def changed_paths(receipt: EffectReceipt) -> list[tuple[str, str | None]]:
    """(path under the root, digest left or None when removed) for each file it changed."""
    evidence = receipt.evidence
    found = list(applied_tree_results(evidence))  # a review's rejected changes never landed
    if receipt.tool in FILE_TOOLS and evidence.has("result_sha256"):
        found.append((str(receipt.arguments.get("path", "")), evidence.result_sha256))
    return found


def effect_entry(receipt: EffectReceipt) -> dict[str, Any]:
    """An effect as the statement tells it: its parts as the log holds them, verbatim."""
    evidence = receipt.evidence.as_record()
    entry: dict[str, Any] = {
        "receipt_id": receipt.receipt_id,
        "call_id": receipt.tool_call_id,
        "run_id": evidence.get("run_id"),
        "time": evidence.get("time"),
        "tool": receipt.tool,
        "exit_state": receipt.exit_state,
        "changed": [{"path": path, "sha256": digest} for path, digest in changed_paths(receipt)],
        "approval": evidence.get("approval"),
    }
    if receipt.tool == "run_command" or "argv" in evidence:
        entry["argv"] = evidence.get("argv", receipt.arguments.get("argv"))
        entry["exit_status"] = evidence.get("exit_status")
        entry["timed_out"] = bool(evidence.get("timed_out"))
    elif "path" in receipt.arguments:
        entry["path"] = receipt.arguments["path"]
    for key in ("review", "sandbox", "reverts", "recovered", "mcp"):
        if key in evidence:
            entry[key] = evidence[key]
    return entry


def run_entry(sessions: SessionStore, run_id: str) -> dict[str, Any]:
    """The run as its own record tells it: goal, who ran it and how, start and end, model."""
    entry: dict[str, Any] = {"run_id": run_id}
    try:
        folder = sessions.run_folder(run_id)
    except AgentError:
        return entry
    for line in read_entries(folder / DECISIONS_FILE):
        kind = line.get("kind")
        if kind in ("started", "resumed") and "goal" not in entry:
            entry.update(
                goal=line.get("goal"),
                by=line.get("by"),
                via=line.get("via"),
                started=line.get("time"),
            )
            for key in ("model", "model_identity", RULES_KEY):  # the rule set in force
                if key in line:
                    entry[key] = line[key]
            said = identity_short(line.get("model_identity"))
            if said is not None:  # the words the tree, the panel and the verdict show
                entry["model_said"] = said
        elif "verdict" in line:  # the run's end, with the verdict it recorded
            entry.update(
                end_state=kind,
                ended=line.get("time"),
                reason=line.get("reason"),
                recorded_verdict=line.get("verdict"),
            )
    return entry


def outcome_of_entry(entry: dict[str, Any]) -> EffectOutcome:
    """An effect of the predicate as the verdict sees it: its files changed, and a command's
    argv, exit status and review. The export and the verifier both read effects through this,
    so they judge validation from the same facts."""
    changed = entry.get("changed")
    changes = tuple(
        (item["path"], item["sha256"])
        for item in (changed if isinstance(changed, list) else [])
        if isinstance(item, dict)
        and isinstance(item.get("path"), str)
        and isinstance(item.get("sha256"), (str, type(None)))
    )
    argv, status, review = entry.get("argv"), entry.get("exit_status"), entry.get("review")
    tool = str(entry.get("tool"))
    decision = review.get("decision") if isinstance(review, dict) else None
    return EffectOutcome(
        str(entry.get("call_id")),
        tool,
        "approved",
        argv=(
            tuple(argv)
            if tool == "run_command"
            and isinstance(argv, list)
            and all(isinstance(item, str) for item in argv)
            else None
        ),
        exit_status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        timed_out=entry.get("timed_out") is True,
        tree_changes=changes,
        review=decision if isinstance(decision, str) else None,
    )


def review_rejections(effects: list[dict[str, Any]]) -> list[str]:
    """The call ids of commands whose reviewed changes the person rejected."""
    return [
        outcome.call_id for outcome in map(outcome_of_entry, effects) if outcome.review_rejected
    ]


def validation_entry(effects: list[dict[str, Any]]) -> dict[str, Any]:
    """The validation the effects show, in log order, by the verdict's own rule: the deciding
    command, its exit status, and the change it came after."""
    outcomes = [outcome_of_entry(effect) for effect in effects]
    verdict = compute_verdict(outcomes)
    last_change = None
    for outcome in outcomes:
        if outcome.changed_files:
            last_change = outcome.call_id
    command = verdict.outcome(verdict.validated_by)
    return {
        "status": verdict.validation,
        "call_id": verdict.validated_by,
        "argv": None if command is None or command.argv is None else list(command.argv),
        "exit_status": None if command is None else command.exit_status,
        "after": last_change,
    }


def build_statement(
    log: VerifiedLog,
    log_path: Path,
    repository: Repository,
    prefix: str,
    commit: str,
    runs: list[str] | None,
) -> dict[str, Any]:
    """The Statement for `commit`: the named runs, or else every run that changed a file the
    commit changes."""
    known = run_ids(log.receipts)
    if runs:
        missing = [run for run in runs if run not in known]
        if missing:
            raise AgentError(f"the log has no receipt of run {missing[0]}")
        chosen = runs
    else:
        touched = repository.changed_paths(commit)
        chosen = [
            run
            for run in known
            if any(
                prefix + path in touched
                for receipt in log.receipts
                if receipt.evidence.run_id == run
                for path, _ in changed_paths(receipt)
            )
        ]
        if not chosen:
            raise AgentError(
                f"no run in the log changed a file that commit {commit[:12]} changes; "
                "name the runs with --run"
            )
    effects = [receipt for receipt in log.receipts if receipt.evidence.run_id in chosen]
    last: dict[str, tuple[str | None, EffectReceipt]] = {}
    for receipt in effects:
        for path, digest in changed_paths(receipt):
            last.pop(path, None)
            last[path] = (digest, receipt)
    committed = repository.blobs(commit, [prefix + path for path in last])
    subjects: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    for path, (digest, receipt) in last.items():
        data = committed[prefix + path]
        entry: dict[str, Any] = {"path": prefix + path, "last_receipt": receipt.receipt_id}
        if data is None:
            entry.update(in_commit=False, receipt_sha256=digest)
        else:
            blob = hashlib.sha256(data).hexdigest()
            subjects.append({"name": prefix + path, "digest": {"sha256": blob}})
            entry.update(in_commit=True, sha256=blob, written_by_receipt=blob == digest)
            if blob != digest:
                entry["note"] = NOT_WRITTEN
        files.append(entry)
    sessions = SessionStore(log_path)
    entries = [effect_entry(receipt) for receipt in effects]
    predicate = {
        "commit": commit,
        "root": prefix,
        "log": {"head_link": log.link, "receipts": log.count, "signed_by": log.signed_by},
        "runs": [run_entry(sessions, run) for run in chosen],
        "effects": entries,
        "validation": validation_entry(entries),
        "files": files,
    }
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }

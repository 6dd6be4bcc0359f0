"""Intent, effect, receipt: an approved effect is written down before it runs, so a process
killed between the yes and the receipt still leaves an account of it.

On the next open (a run, a resume) an intent without a receipt is settled from the disk alone:
the file holds the approved bytes, so the effect was performed (a receipt marked `recovered`,
with the approval evidence); it holds the bytes from before, so it was not (the intent says
so); it holds neither, so it is unknown (the person is told). A command whose end was not
recorded is recorded as interrupted. Nothing is done again: a retry needs a new yes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..proposals import CommandProposal, EditProposal, McpProposal, ToolProposal
from ..receipt_evidence import utc_now
from ..receipt_fields import ApprovalRecord, ReceiptEvidence
from ..receipts import EffectReceipt, ReceiptStore
from ..receipts.retention import register_digest_source
from ..receipts.verify import file_digest
from ..steps import error_text
from .decisions import note_settled
from .intent_seal import BINDING_KEY, seal_problem
from .record import CheckpointRefused, LogPosition
from .reopen import position_extends
from .store import SessionStore

OUTCOMES = ("performed", "not_performed", "unknown", "interrupted")
INTERRUPTED_RESULT = (
    "interrupted: the command was approved and started, and the run stopped before its end "
    "was recorded; what it did is not known"
)


@dataclass(frozen=True)
class Settled:
    """What became of one intent found without a receipt."""

    run_id: str
    call_id: str
    tool: str
    outcome: str
    sentence: str  # for the person
    observation: str  # for the model, when it resumes after this call
    error: str | None = None  # the observation's sentence, when the call was not done

    @property
    def heading(self) -> str:
        """How the person's line starts: `recovered`, or `ignored` for a foreign intent."""
        return "ignored" if self.outcome == "foreign" else "recovered"

    @property
    def line(self) -> str:
        """The one line the terminal and the daemon both show."""
        return f"{self.heading}: {self.sentence}"


def intent_of(
    proposal: ToolProposal, approval: ApprovalRecord, run_id: str, root: Path
) -> dict[str, Any]:
    """The record written before an approved effect runs."""
    intent: dict[str, Any] = {
        "call_id": proposal.tool_call_id,
        "run_id": run_id,
        "tool": proposal.action.tool,
        "arguments": dict(proposal.action.arguments),
        "root": str(root),
        "approval": approval.as_record(),
        "time": utc_now(),
    }
    if isinstance(proposal, CommandProposal):
        intent.update(kind="command", argv=list(proposal.argv), cwd=proposal.cwd)
    else:
        assert isinstance(proposal, EditProposal)
        intent.update(
            kind="file",
            path=proposal.path,
            base_sha256=proposal.base_sha256,
            proposed_sha256=None if proposal.removes_file else proposal.proposed_sha256,
            reverts=proposal.reverts,
        )
    return intent


def mcp_intent_of(
    proposal: McpProposal, approval: ApprovalRecord, run_id: str, root: Path
) -> dict[str, Any]:
    """The record written before an approved MCP call is sent: settled as interrupted, as a
    command is, since no one can tell from the disk whether the server acted on it."""
    return {
        "call_id": proposal.tool_call_id,
        "run_id": run_id,
        "tool": proposal.action.tool,
        "arguments": dict(proposal.action.arguments),
        "root": str(root),
        "approval": approval.as_record(),
        "time": utc_now(),
        "kind": "mcp",
        "mcp": {
            "server": proposal.server,
            "tool": proposal.tool,
            "definition_sha256": proposal.definition_sha256,
        },
    }


@dataclass(frozen=True)
class ForeignIntent:
    """An intent file this installation did not write for this log (or cannot read)."""

    run_id: str
    name: str
    sentence: str


def read_intents(
    sessions: SessionStore, run_id: str, receipts: ReceiptStore
) -> tuple[list[dict[str, Any]], list[ForeignIntent]]:
    """The run's open intents (no outcome, no receipt) this installation wrote for this log
    and run, and a sentence for each other open one or unreadable file in its intents folder
    (never trusted, never settled). A closed intent is never settled, so it is not judged:
    another installation verifying the log hears nothing of them."""
    trusted: list[dict[str, Any]] = []
    foreign: list[ForeignIntent] = []
    try:
        files = sessions.intents(run_id)
    except (CheckpointRefused, OSError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        files = []
        foreign.append(
            ForeignIntent(run_id, "intents", f"run {run_id}: intents unreadable: {reason}")
        )
    for name, data in files:
        label = f"intent {name} of run {run_id}"
        if data is None:
            foreign.append(ForeignIntent(run_id, name, f"{label} is not a regular file"))
            continue
        try:
            intent = json.loads(data)
        except (ValueError, RecursionError):
            intent = None
        if isinstance(intent, dict) and not _is_open(intent, receipts):
            continue  # closed (an outcome, or its receipt): never settled, nothing to trust
        problem = seal_problem(intent, label)
        if problem is None:
            problem = _binding_problem(sessions, run_id, name, intent)
            if problem is None:
                trusted.append(intent)
        if problem is not None:
            foreign.append(ForeignIntent(run_id, name, f"{problem}; ignored, nothing recorded"))
    return trusted, foreign


def _binding_problem(
    sessions: SessionStore, run_id: str, name: str, intent: dict[str, Any]
) -> str | None:
    """Why a sealed intent does not belong here: another log, run or call, a log that no
    longer extends the head it was written at, or a checkpoint it was not written with."""
    label = f"intent {name} of run {run_id}"
    binding = intent[BINDING_KEY]
    if binding.get("log") != str(sessions.log_path) or intent["run_id"] != run_id:
        return f"{label} was written for another receipt log or run"
    if f"{intent['call_id']}.json" != name:
        return f"{label} names another call ({intent['call_id']})"
    try:
        position = LogPosition(**binding["log_position"])
    except (KeyError, TypeError):
        return f"{label} is malformed (log_position)"
    if not position_extends(sessions.log_path, position):
        return f"{label} was written at a receipt log this one does not extend"
    checkpoint_id = binding.get("checkpoint_id")
    if checkpoint_id is not None:
        try:
            current = sessions.load(run_id).checkpoint.checkpoint_id
        except CheckpointRefused:
            current = None
        if current != checkpoint_id:
            return f"{label} does not match its run's checkpoint"
    return None


def _sealed(sessions: SessionStore, run_id: str) -> list[dict[str, Any]]:
    """The run's intents whose seal holds, wherever their log is."""
    found = []
    for name, data in sessions.intents(run_id):
        try:
            intent = json.loads(data) if data is not None else None
        except (ValueError, RecursionError):
            continue
        if isinstance(intent, dict) and seal_problem(intent, name) is None:
            found.append(intent)
    return found


def _is_open(intent: dict[str, Any], receipts: ReceiptStore) -> bool:
    call_id = intent.get("call_id")
    if "outcome" in intent:
        return False
    return not isinstance(call_id, str) or receipts.get(call_id) is None


def open_intents(
    sessions: SessionStore, receipts: ReceiptStore
) -> list[tuple[str, dict[str, Any]]]:
    """(run id, intent) of each intent without a receipt or an outcome, in runs no process
    holds (a live run's effect may be running now)."""
    return open_and_foreign(sessions, receipts)[0]


def open_and_foreign(
    sessions: SessionStore, receipts: ReceiptStore
) -> tuple[list[tuple[str, dict[str, Any]]], list[ForeignIntent]]:
    found: list[tuple[str, dict[str, Any]]] = []
    foreign: list[ForeignIntent] = []
    for run_id in sessions.run_ids():
        if sessions.is_live(run_id):
            continue
        trusted, others = read_intents(sessions, run_id, receipts)
        foreign += others
        found += [(run_id, intent) for intent in trusted]
    return found, foreign


def settle_intents(sessions: SessionStore, receipts: ReceiptStore) -> list[Settled]:
    """Settle every open intent from the disk; each is settled once. A foreign or malformed
    intent file is reported (outcome `foreign`), never settled."""
    settled: list[Settled] = []
    found_open, foreign = open_and_foreign(sessions, receipts)
    for item in foreign:
        settled.append(Settled(item.run_id, item.name, "", "foreign", item.sentence, ""))
    for run_id, intent in found_open:
        found = _settle(intent, receipts)
        intent.update(outcome=found.outcome, settled=utc_now())
        sessions.write_intent(run_id, intent["call_id"], intent)
        note_settled(sessions, run_id, found.call_id, found.outcome)
        settled.append(found)
    return settled


def classify(intent: dict[str, Any]) -> str:
    """What the disk says of an open intent: performed, not_performed, unknown (a file
    effect) or interrupted (a command)."""
    if intent.get("kind") in ("command", "mcp"):
        return "interrupted"
    current = file_digest(Path(intent["root"]), str(intent["path"]))
    if current == intent.get("proposed_sha256"):
        return "performed"
    return "not_performed" if current == intent.get("base_sha256") else "unknown"


def objects_in_use(own: Path) -> set[str]:
    """The content-store digests a run not yet ended may still name (the bytes before and
    after an effect whose receipt is not written yet): `receipts gc` keeps them (registered
    below). Every log sharing an own folder shares its sessions, as it shares its objects;
    any intent this installation sealed counts (keeping too much costs only space)."""
    sessions = SessionStore(own / "receipts.jsonl", own=own)
    digests: set[str] = set()
    for run_id in sessions.run_ids():
        if _ended(sessions, run_id):
            continue
        for intent in _sealed(sessions, run_id):
            for key in ("base_sha256", "proposed_sha256"):
                value = intent.get(key)
                if isinstance(value, str):
                    digests.add(value)
    return digests


def _settle(intent: dict[str, Any], receipts: ReceiptStore) -> Settled:
    if intent.get("kind") == "mcp":
        _record(receipts, intent, "error", INTERRUPTED_RESULT, "interrupted", ())
        facts: dict[str, Any] = intent["mcp"] if isinstance(intent["mcp"], dict) else {}
        server: dict[str, Any] = facts.get("server") or {}
        return _settled(
            intent,
            f"{server.get('name')}/{facts.get('tool')}",
            "interrupted",
            "was interrupted: recorded as interrupted",
            INTERRUPTED_RESULT,
        )
    if intent.get("kind") == "command":
        _record(receipts, intent, "error", INTERRUPTED_RESULT, "interrupted", ())
        return _settled(
            intent,
            intent.get("argv"),
            "interrupted",
            "was interrupted: recorded as interrupted",
            INTERRUPTED_RESULT,
        )
    tool, path = intent["tool"], str(intent["path"])
    outcome = classify(intent)
    if outcome == "performed":
        verb = _verb(intent)
        result = f"{verb} {path}" + (f" (reverts {intent['reverts']})" if intent["reverts"] else "")
        _record(receipts, intent, "ok", result, "performed", (path,))
        return _settled(
            intent,
            path,
            "performed",
            "was performed before the interruption: recorded as recovered",
            result,
        )
    if outcome == "not_performed":
        return _settled(
            intent,
            path,
            "not_performed",
            f"was not performed: {path} still holds the bytes from before",
            error=f"{tool} of {path} was approved but not performed before the run was "
            "interrupted; the file is unchanged",
        )
    return _settled(
        intent,
        path,
        "unknown",
        f"is unknown: {path} holds neither the bytes from before nor the approved ones; "
        "check it by hand",
        error=f"whether {tool} of {path} was performed is unknown (the file holds other "
        "bytes); read it again before changing it",
    )


def _settled(
    intent: dict[str, Any],
    target: object,
    outcome: str,
    account: str,
    observation: str = "",
    *,
    error: str | None = None,
) -> Settled:
    """The intent's outcome; the person's sentence names the call and its target first. With
    `error` (the gate's sentence for a call not done) the model's observation is that error."""
    call_id, tool = intent["call_id"], intent["tool"]
    sentence = f"{call_id} ({tool} {target}) {account}"
    if error is not None:
        observation = error_text(error)
    return Settled(intent["run_id"], call_id, tool, outcome, sentence, observation, error)


def _verb(intent: dict[str, Any]) -> str:
    if intent.get("reverts"):
        return "removed" if intent.get("proposed_sha256") is None else "restored"
    return "edited" if intent["tool"] == "edit_file" else "wrote"


def _record(
    receipts: ReceiptStore,
    intent: dict[str, Any],
    exit_state: str,
    result: str,
    recovered: str,
    artifacts: tuple[str, ...],
) -> None:
    evidence: dict[str, Any] = {"run_id": intent["run_id"], "run_record": True}
    if intent.get("kind") == "mcp":
        evidence.update(mcp=intent["mcp"])
    elif intent.get("kind") == "command":
        evidence.update(argv=intent["argv"], cwd=intent["cwd"])
    else:
        evidence.update(base_sha256=intent["base_sha256"], result_sha256=intent["proposed_sha256"])
        if intent.get("reverts"):
            evidence["reverts"] = intent["reverts"]
    evidence.update(approval=intent["approval"], recovered=recovered, time=utc_now())
    # The intent is a record on disk, read as a receipt's evidence is: what this version cannot
    # read in it is kept as it was written.
    try:
        receipts.put(
            EffectReceipt(
                tool_call_id=intent["call_id"],
                tool=intent["tool"],
                arguments=intent["arguments"],
                exit_state=exit_state,
                result=result,
                changed_artifacts=artifacts,
                evidence=ReceiptEvidence.from_record(evidence),
            )
        )
    except OSError as error:
        raise AgentError(f"could not record a recovered receipt: {error.strerror}") from None


def _ended(sessions: SessionStore, run_id: str) -> bool:
    """Only a run that says it ended, and that no process holds, needs nothing kept."""
    try:
        return sessions.load(run_id).state == "ended" and not sessions.is_live(run_id)
    except CheckpointRefused:
        return False


def describe_open_intents(log_path: Path) -> list[str]:
    """A line for each approved effect with no receipt yet and what the disk says of it (read
    only: the next run or resume on this log records it), and one for each foreign intent."""
    receipts = ReceiptStore(log_path, signer=None)
    lines = []
    found_open, foreign = open_and_foreign(SessionStore(log_path), receipts)
    lines += [f"ignored: {item.sentence}" for item in foreign]
    for run_id, intent in found_open:
        target = intent.get("path", intent.get("argv"))
        lines.append(
            f"open intent: {intent['call_id']} ({intent['tool']} {target}, run {run_id}) has no receipt; "
            f"the disk says {classify(intent).replace('_', ' ')}; the next run or resume "
            "records it"
        )
    return lines


register_digest_source(objects_in_use)

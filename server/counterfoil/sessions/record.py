"""A run's durable checkpoint: the course's checkpoint plus what a resume must re-check.

It is written at each complete observation (and when an approval is asked) and holds the
conversation, the record of which messages are observations, the digests of files the model
read, the receipt log's head it extends, and the approval still open, if any. It never holds
the policy: a resume takes that from the person's current flags. The file is one JSON object
`{"format", "sha256", "body"}`; the digest catches a changed or cut file, not a forger.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..context.budget import Observation
from ..context.evidence import ArtifactRef
from ..errors import AgentError
from ..model_state import ModelCheckpoint
from ..receipts.head import read_head
from .checkpoint import AgentCheckpoint, create_checkpoint

FORMAT_VERSION = 1
STATES = ("running", "paused", "ended")
DISCARDED = "discarded"  # the reason of a run the person closed rather than resumed


class CheckpointRefused(AgentError):
    """A checkpoint that cannot be resumed; the message is one sentence for the person."""


@dataclass(frozen=True)
class LogPosition:
    """The receipt log's head when the checkpoint was written: it must still be a prefix."""

    count: int = 0
    lines: int = 0
    length: int = 0
    link: str = ""

    @classmethod
    def of_log(cls, log: Path) -> LogPosition:
        """Where the log at `log` stands now, by its head record (its start when it has none)."""
        head = read_head(log)
        return cls() if head is None else cls(head.count, head.lines, head.length, head.link)


@dataclass(frozen=True)
class PendingCall:
    """An effect the model asked for whose approval was open: asked again on resume."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    response: str  # the model's text, appended with the observation once it is answered


@dataclass(frozen=True)
class SessionRecord:
    run_id: str
    root: str
    log: str
    checkpoint: AgentCheckpoint
    state: str = "running"
    reason: str | None = None  # how the run ended or stopped
    started: str = ""
    updated: str = ""
    observations: tuple[Observation, ...] = ()
    read_digests: dict[str, str] = field(default_factory=dict)
    log_position: LogPosition = field(default_factory=LogPosition)
    pending: PendingCall | None = None
    model_restorable: bool = True  # False: the model had no state to save
    model_note: str | None = None
    prompt_cache: str | None = None  # the KV cache's file in the run's folder, if kept
    prompt_cache_sha256: str | None = None  # its bytes' digest: read back only if they match

    @property
    def steps(self) -> int:
        """The model's turns: those the checkpoint holds, and the final answer that completed
        the run (it has no observation, so no checkpoint follows it)."""
        taken = sum(1 for role, _ in self.checkpoint.messages if role == "assistant")
        return taken + (1 if self.state == "ended" and self.reason == "completed" else 0)

    def with_state(self, state: str, reason: str | None, updated: str) -> SessionRecord:
        return replace(self, state=state, reason=reason, updated=updated)

    def to_bytes(self) -> bytes:
        body = _body(self)
        digest = hashlib.sha256(_canonical(body)).hexdigest()
        return _canonical({"format": FORMAT_VERSION, "sha256": digest, "body": body}) + b"\n"


def load_record(data: bytes, name: str) -> SessionRecord:
    """The record in `data`, or CheckpointRefused saying in one sentence why not (`name`:
    how the person knows the run)."""
    try:
        outer = json.loads(data)
    except (ValueError, RecursionError):
        raise CheckpointRefused(
            f"the checkpoint of run {name} is not readable (truncated or corrupt)"
        ) from None
    if not isinstance(outer, dict) or not isinstance(outer.get("body"), dict):
        raise CheckpointRefused(f"the checkpoint of run {name} is not a checkpoint")
    version = outer.get("format")
    if version != FORMAT_VERSION:
        raise CheckpointRefused(
            f"the checkpoint of run {name} has format version {version!r}, which this version "
            f"does not know (it reads version {FORMAT_VERSION})"
        )
    body = outer["body"]
    if hashlib.sha256(_canonical(body)).hexdigest() != outer.get("sha256"):
        raise CheckpointRefused(
            f"the checkpoint of run {name} does not match its digest (it was changed after "
            "it was written)"
        )
    try:
        record = _from_body(body)
        record.checkpoint.validate()
    except (AgentError, KeyError, TypeError, ValueError) as error:
        raise CheckpointRefused(f"the checkpoint of run {name} is invalid: {error}") from None
    if record.state not in STATES:
        raise CheckpointRefused(f"the checkpoint of run {name} has an unknown state")
    return record


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _body(record: SessionRecord) -> dict[str, Any]:
    checkpoint = record.checkpoint
    return {
        "run_id": record.run_id,
        "root": record.root,
        "log": record.log,
        "state": record.state,
        "reason": record.reason,
        "started": record.started,
        "updated": record.updated,
        "checkpoint": {
            "checkpoint_id": checkpoint.checkpoint_id,
            "task": checkpoint.task,
            "messages": [list(message) for message in checkpoint.messages],
            "model": checkpoint.model.to_dict(),
        },
        "observations": [asdict(observation) for observation in record.observations],
        "read_digests": dict(record.read_digests),
        "log_position": asdict(record.log_position),
        "pending": None if record.pending is None else asdict(record.pending),
        "model_restorable": record.model_restorable,
        "model_note": record.model_note,
        "prompt_cache": record.prompt_cache,
        "prompt_cache_sha256": record.prompt_cache_sha256,
    }


def _observation(item: dict[str, Any]) -> Observation:
    """An observation as saved, with the artifacts it names as `ArtifactRef`s again (a range
    read of one after a resume needs them whole, not as dicts)."""
    fields = dict(item)
    for key in ("shows", "summary_shows"):
        value = fields.get(key)
        fields[key] = None if value is None else ArtifactRef(**value)
    return Observation(**fields)


def _from_body(body: dict[str, Any]) -> SessionRecord:
    saved = body["checkpoint"]
    messages = [{"role": role, "content": content} for role, content in saved["messages"]]
    checkpoint = create_checkpoint(
        saved["task"], messages, ModelCheckpoint.from_dict(saved["model"])
    )
    if checkpoint.checkpoint_id != saved["checkpoint_id"]:
        raise AgentError("checkpoint identity does not match its content")
    pending = body["pending"]
    digests = body["read_digests"]
    if not isinstance(digests, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in digests.items()
    ):
        raise AgentError("read digests are invalid")
    strings = (body["run_id"], body["root"], body["log"], body["started"], body["updated"])
    if not all(isinstance(text, str) for text in strings):
        raise AgentError("the run's names are invalid")
    return SessionRecord(
        run_id=body["run_id"],
        root=body["root"],
        log=body["log"],
        checkpoint=checkpoint,
        state=body["state"],
        reason=body["reason"],
        started=body["started"],
        updated=body["updated"],
        observations=tuple(_observation(item) for item in body["observations"]),
        read_digests=dict(digests),
        log_position=LogPosition(**body["log_position"]),
        pending=None if pending is None else PendingCall(**pending),
        model_restorable=bool(body["model_restorable"]),
        model_note=body["model_note"],
        prompt_cache=body.get("prompt_cache"),
        prompt_cache_sha256=body.get("prompt_cache_sha256"),
    )

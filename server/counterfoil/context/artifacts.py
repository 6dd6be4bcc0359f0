"""Bounded observations in a run: what the model is shown of a large tool result, the range it
may read back, and the record a completed effect compacts to.

One store: an artifact is a receipts content-store object (`artifact-<sha256>` names
`objects/<sha256>`), so a command's artifact is the very output its receipt names and a whole
file read is the bytes a later edit's receipt keeps. A range is served only for artifacts this
conversation was shown (its `Observation` records say which), and the bytes are checked against
their digest on every read. The run's events, the trace and the receipts keep every result
whole; only the model's view is bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..actions import ToolAction
from ..commands.runner import status_line
from ..errors import AgentError
from ..receipts import EffectReceipt, ReceiptStore
from ..receipts.content import load_object
from ..receipts.own_folder import own_folder
from ..steps import StepResult
from .budget import MIN_INLINE_CHARS, Observation
from .compaction import compacted_record
from .evidence import (
    ArtifactRef,
    artifact_path,
    bounded_observation,
    checked_range,
    read_artifact_path,
    verified_range,
)

RECORD_PREVIEW_CHARS = 160


@dataclass(frozen=True)
class EvidenceLimits:
    """An observation over `max_inline_chars` is externalized; its previews and the ranges the
    model may read follow from that budget unless given."""

    max_inline_chars: int = 16_000
    preview_bytes: int | None = None  # each of head and tail; default an eighth of the budget
    max_range_bytes: int | None = None  # default half the budget

    def __post_init__(self) -> None:
        if (
            not isinstance(self.max_inline_chars, int)
            or isinstance(self.max_inline_chars, bool)
            or self.max_inline_chars < MIN_INLINE_CHARS
        ):
            raise ValueError(f"max_inline_chars must be an integer of at least {MIN_INLINE_CHARS}")

    @property
    def previews(self) -> int:
        return self.preview_bytes or min(2_048, self.max_inline_chars // 8)

    @property
    def ranges(self) -> int:
        return self.max_range_bytes or max(4, self.max_inline_chars // 2)


class ConversationArtifacts:
    """The artifacts a conversation can reach: stored in `receipt_store`'s content store (in
    memory when the store is), readable once an observation in `observations` showed them."""

    def __init__(self, receipt_store: ReceiptStore, observations: Sequence[Observation]) -> None:
        self.receipt_store = receipt_store
        self.observations = observations
        self._memory: dict[str, bytes] = {}

    def put(self, data: bytes) -> ArtifactRef:
        """Keep `data` as a content-store object and return its identity."""
        digest = self.receipt_store.keep_object(data)
        record = ArtifactRef.of(data)
        assert record.sha256 == digest
        if self.receipt_store.path is None:
            self._memory[record.artifact_id] = data
        return record

    def stored(self, digest: str) -> tuple[ArtifactRef, bytes] | None:
        """An object already in the content store (a command's output), if it is readable."""
        log = self.receipt_store.path
        data = None if log is None else load_object(own_folder(log), digest)
        return None if data is None else (ArtifactRef.of(data), data)

    def ref(self, artifact_id: str) -> ArtifactRef | None:
        """The identity of an artifact this conversation was shown, else None."""
        for observation in self.observations:
            for shown in observation.shown_artifacts():
                if shown.artifact_id == artifact_id:
                    return shown
        return None

    def read_range(self, artifact_id: str, start: int, end: int) -> bytes:
        record = checked_range(self, artifact_id, start, end)
        log = self.receipt_store.path
        if log is None:
            data = self._memory.get(artifact_id)
        else:
            data = load_object(own_folder(log), record.sha256)  # None when absent or changed
        if data is None:
            raise AgentError("artifact digest does not match its recorded identity")
        return verified_range(record, data, start, end)

    def read(self, path: str, limits: EvidenceLimits) -> StepResult:
        """Answer a reserved `.tool-artifacts/…` read: the range, or a refusal."""
        return read_artifact_path(path, self, limits.ranges)


@dataclass(frozen=True)
class ShapedObservation:
    """What the model is shown of one result, and what it may compact to later."""

    text: str
    shows: ArtifactRef | None = None
    summary: str | None = None
    summary_shows: ArtifactRef | None = None


def shape_observation(
    artifacts: ConversationArtifacts,
    limits: EvidenceLimits | None,
    action: ToolAction,
    step: StepResult,
    receipt: EffectReceipt | None,
) -> ShapedObservation:
    """Externalize a successful result over the inline budget (`limits=None`: never), and,
    for an effect whose receipt holds exactly this result, prepare its compacted record."""
    result = step.observation
    text, shows = step.model_text(), None
    # Only a result longer than a record's preview needs its artifact (budgets are longer).
    output = _command_output(artifacts, receipt) if len(result) > RECORD_PREVIEW_CHARS else None
    if limits is not None and not step.is_error and len(result) > limits.max_inline_chars:
        truncated = receipt is not None and receipt.evidence.output_truncated is True
        effect = step.effect
        command = None
        if effect is not None and effect.argv is not None and output is not None:
            command = (status_line(effect.exit_status, effect.timed_out), *output)
        text, shows = _externalized(artifacts, limits, result, command, truncated)
    if (
        receipt is None
        or receipt.tool != action.tool
        or receipt.arguments != action.arguments
        or receipt.result != result
    ):
        return ShapedObservation(text, shows)
    rest: dict[str, Any] | None = None
    summary_shows = None
    if len(result) > RECORD_PREVIEW_CHARS:  # the record names where the rest can be read
        summary_shows = shows or (output[0] if output else artifacts.put(result.encode("utf-8")))
        rest = {
            "artifact_bytes": summary_shows.byte_count,
            "artifact_id": summary_shows.artifact_id,
        }
    summary = compacted_record(receipt, RECORD_PREVIEW_CHARS, rest)
    return ShapedObservation(text, shows, summary, summary_shows)


def _command_output(
    artifacts: ConversationArtifacts, receipt: EffectReceipt | None
) -> tuple[ArtifactRef, bytes] | None:
    """A command's whole output as its receipt names it in the content store."""
    digest = None if receipt is None else receipt.evidence.output_sha256
    return None if digest is None else artifacts.stored(digest)


def _externalized(
    artifacts: ConversationArtifacts,
    limits: EvidenceLimits,
    result: str,
    command: tuple[str, ArtifactRef, bytes] | None,
    truncated: bool = False,
) -> tuple[str, ArtifactRef]:
    """The course's externalized observation; a command's (`command`: its status line, built
    from the effect's record, and the whole output its receipt keeps) keeps its status line
    first and points at that whole output, not just the part its observation held."""
    budget = limits.max_inline_chars
    if command is not None:
        status, record, data = command
        note = "\n[only the first bytes of the output were kept]" if truncated else ""
        bounded = bounded_observation(
            record, data, budget - len(status) - len(note), limits.previews, limits.ranges
        )
        return status + bounded + note, record
    data = result.encode("utf-8")
    record = artifacts.put(data)
    return bounded_observation(record, data, budget, limits.previews, limits.ranges), record


class RunEvidence:
    """One run's side of bounded evidence for a receipt-keeping workspace: range reads are
    answered here (never by the workspace), and every other result is shaped for the model."""

    def __init__(
        self,
        receipt_store: ReceiptStore,
        limits: EvidenceLimits | None,
        observations: Sequence[Observation],
    ) -> None:
        self.limits = limits
        self.artifacts = ConversationArtifacts(receipt_store, observations)

    @classmethod
    def of(
        cls,
        receipt_store: ReceiptStore | None,
        max_inline_chars: int | None,
        observations: Sequence[Observation],
    ) -> RunEvidence | None:
        """None for a workspace that keeps no receipts (the course's plain kind)."""
        if receipt_store is None:
            return None
        limits = None if max_inline_chars is None else EvidenceLimits(max_inline_chars)
        return cls(receipt_store, limits, observations)

    def execute(
        self, action: ToolAction, take_step: Callable[[ToolAction], StepResult]
    ) -> tuple[StepResult, ShapedObservation]:
        """The gate's whole record of the step (for the events and the trace), and what the
        model is shown; the receipt is the one the record names."""
        path = artifact_path(action)
        if path is not None:
            step = self.artifacts.read(path, self.limits or EvidenceLimits())
            return step, ShapedObservation(step.observation)
        step = take_step(action)
        receipt = None
        if step.receipt_id is not None and step.call_id is not None:
            receipt = self.artifacts.receipt_store.get(step.call_id)
        return step, shape_observation(self.artifacts, self.limits, action, step, receipt)

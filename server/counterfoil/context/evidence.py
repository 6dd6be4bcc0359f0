"""Large tool results kept outside the model's context: exact bytes by identity, a bounded
observation with head and tail previews, and explicit byte ranges read back through `read_file`
(the tiny-llm course's Day 9).

A range is asked for with the reserved path `.tool-artifacts/<artifact_id>/bytes/<start>-<end>`;
every path under `.tool-artifacts/` belongs to it and never reaches a real file. The functions
below the course's classes are the same rules for any store (the product's lives on the
receipts' content store, see `artifacts.py`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ..actions import ToolAction
from ..errors import AgentError
from ..files.paths import RESERVED_FOLDER
from ..gate.policy import ToolPolicy
from ..gate.workspace import Workspace
from ..steps import StepGate, StepResult, plain_step, refusal, steps_itself

ARTIFACT_FOLDER = RESERVED_FOLDER + "/"
EXTERNALIZED_PREFIX = "Tool result externalized:\n"
RANGE_PREFIX = "Artifact range:\n"
MALFORMED_PATH = "artifact range path is malformed"
_ARTIFACT_ID = re.compile(r"artifact-[0-9a-f]{64}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_RANGE_PATH = re.compile(r"\.tool-artifacts/(artifact-[0-9a-f]{64})/bytes/([0-9]+)-([0-9]+)")


@dataclass(frozen=True)
class ArtifactRef:
    """Identity and size of one exact externalized tool result."""

    artifact_id: str
    byte_count: int
    sha256: str

    def __post_init__(self) -> None:
        if not isinstance(self.artifact_id, str) or not _ARTIFACT_ID.fullmatch(self.artifact_id):
            raise ValueError("artifact id is invalid")
        if type(self.byte_count) is not int or self.byte_count < 0:
            raise ValueError("artifact byte count must be a non-negative integer")
        if not isinstance(self.sha256, str) or not _DIGEST.fullmatch(self.sha256):
            raise ValueError("artifact digest is invalid")
        if self.artifact_id != f"artifact-{self.sha256}":
            raise ValueError("artifact id must match its digest")

    @classmethod
    def of(cls, data: bytes) -> ArtifactRef:
        digest = hashlib.sha256(data).hexdigest()
        return cls(f"artifact-{digest}", len(data), digest)


class ArtifactSource(Protocol):
    """What a range read needs of a store: the identity it recorded, and checked bytes."""

    def ref(self, artifact_id: str) -> ArtifactRef | None: ...

    def read_range(self, artifact_id: str, start: int, end: int) -> bytes: ...


@dataclass
class ArtifactStore:
    """Exact bytes under one explicit local folder, known to this store only: a store does not
    serve an artifact it did not `put`, whatever is on disk."""

    root: Path
    _records: dict[str, ArtifactRef] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        root = Path(self.root)
        if root.is_symlink():
            raise ValueError("artifact root must not be a symlink")
        try:
            root = root.resolve(strict=True)
        except OSError as error:
            raise ValueError("artifact root must exist") from error
        if not root.is_dir():
            raise ValueError("artifact root must be a directory")
        self.root = root

    def put(self, result: str) -> ArtifactRef:
        """Persist one complete UTF-8 tool result and return its identity."""
        if not isinstance(result, str):
            raise ValueError("artifact result must be a string")
        data = result.encode("utf-8")
        record = ArtifactRef.of(data)
        path = self.root / record.artifact_id
        temporary: Path | None = None
        try:
            if not path.exists():
                with tempfile.NamedTemporaryFile(dir=self.root, delete=False) as output:
                    output.write(data)
                    temporary = Path(output.name)
                os.replace(temporary, path)
            elif path.read_bytes() != data:
                raise AgentError("artifact contents conflict with their identity")
        except OSError as error:
            raise AgentError("could not store tool-result artifact") from error
        finally:
            if temporary is not None:
                temporary.unlink(missing_ok=True)
        self._records[record.artifact_id] = record
        return record

    def ref(self, artifact_id: str) -> ArtifactRef | None:
        return self._records.get(artifact_id)

    def read_range(self, artifact_id: str, start: int, end: int) -> bytes:
        """Read one exact half-open byte range from a known artifact, checking it first."""
        record = checked_range(self, artifact_id, start, end)
        try:
            data = (self.root / artifact_id).read_bytes()
        except OSError as error:
            raise AgentError("could not read tool-result artifact") from error
        return verified_range(record, data, start, end)

    def range_path(self, artifact_id: str, start: int, end: int) -> str:
        """The virtual read_file path for one explicit byte range."""
        return range_path(artifact_id, start, end)


@dataclass
class BoundedEvidenceWorkspace(StepGate):
    """Bound model-visible results while retaining their exact external bytes."""

    workspace: Workspace
    artifacts: ArtifactStore
    max_inline_bytes: int = 512
    preview_bytes: int = 64
    max_range_bytes: int = 512

    def __post_init__(self) -> None:
        limits = (self.max_inline_bytes, self.preview_bytes, self.max_range_bytes)
        if any(type(limit) is not int or limit <= 0 for limit in limits):
            raise ValueError("evidence limits must be positive integers")
        if self.max_inline_bytes < 512:
            raise ValueError("max_inline_bytes must be at least 512")
        if self.max_range_bytes < 4:
            raise ValueError("max_range_bytes must be at least 4")
        if self.preview_bytes > self.max_inline_bytes:
            raise ValueError("preview_bytes must not exceed max_inline_bytes")

    @property
    def policy(self) -> ToolPolicy:
        """The wrapped policy, for the system prompt."""
        return self.workspace.policy

    @property
    def available_tools(self) -> frozenset[str]:
        """Exactly the wrapped workspace's tools: a range is an ordinary read_file."""
        return self.workspace.available_tools

    @property
    def modified_files(self) -> tuple[str, ...]:
        return self.workspace.modified_files

    def execute_step(self, action: Any, tool_call_id: str | None = None) -> StepResult:
        """Execute normally, externalizing only oversized successful observations (the record
        keeps what the wrapped gate did; only the observation is bounded)."""
        path = artifact_path(action)
        if path is not None:
            return read_artifact_path(path, self.artifacts, self.max_range_bytes)
        if steps_itself(self.workspace):
            step = self.workspace.execute_step(action, tool_call_id)
        else:  # the course's plain surface, redefined on the wrapped workspace
            step = plain_step(self.workspace.execute(action, tool_call_id))
        data = step.observation.encode("utf-8")
        if step.is_error or len(data) <= self.max_inline_bytes:
            return step
        record = self.artifacts.put(step.observation)
        bounded = bounded_observation(
            record, data, self.max_inline_bytes, self.preview_bytes, self.max_range_bytes
        )
        return replace(step, observation=bounded)


def range_path(artifact_id: str, start: int, end: int) -> str:
    """The virtual read_file path for `[start, end)` of an artifact."""
    if not isinstance(artifact_id, str) or not _ARTIFACT_ID.fullmatch(artifact_id):
        raise ValueError("artifact id is invalid")
    if type(start) is not int or type(end) is not int or start < 0 or end <= start:
        raise ValueError("artifact range must satisfy 0 <= start < end")
    return f"{ARTIFACT_FOLDER}{artifact_id}/bytes/{start}-{end}"


def is_reserved(raw: str) -> bool:
    """Whether a path's first normalised component is the reserved folder, however spelt
    (`./.tool-artifacts`, `.tool-artifacts//x`, another letter case)."""
    parts = [part for part in PurePosixPath(raw).parts if part != "."]
    return bool(parts) and parts[0].casefold() == RESERVED_FOLDER


def artifact_path(action: object) -> str | None:
    """The reserved path of a read_file that asks for an artifact range, in its normal
    spelling, else None: every spelling of the reserved folder is answered here, never from a
    real file."""
    if not isinstance(action, ToolAction) or action.tool != "read_file":
        return None
    if not isinstance(action.arguments, dict):
        return None
    raw = action.arguments.get("path")
    if not isinstance(raw, str) or not is_reserved(raw):
        return None
    parts = [part for part in PurePosixPath(raw).parts if part != "."]
    return "/".join([RESERVED_FOLDER, *parts[1:]])


def checked_range(source: ArtifactSource, artifact_id: str, start: int, end: int) -> ArtifactRef:
    """The identity of a range that may be read; AgentError for a bad id, bounds or store."""
    if not isinstance(artifact_id, str) or not _ARTIFACT_ID.fullmatch(artifact_id):
        raise AgentError("artifact id is invalid")
    if type(start) is not int or type(end) is not int:
        raise AgentError("artifact range bounds must be integers")
    if start < 0 or end <= start:
        raise AgentError("artifact range must satisfy 0 <= start < end")
    record = source.ref(artifact_id)
    if record is None:
        raise AgentError("artifact is not available in this store")
    return record


def verified_range(record: ArtifactRef, data: bytes, start: int, end: int) -> bytes:
    """`data[start:end]` once the stored bytes still match their identity."""
    if len(data) != record.byte_count or hashlib.sha256(data).hexdigest() != record.sha256:
        raise AgentError("artifact digest does not match its recorded identity")
    if end > len(data):
        raise AgentError("artifact range exceeds the stored byte count")
    return data[start:end]


def read_artifact_path(raw_path: str, source: ArtifactSource, max_range_bytes: int) -> StepResult:
    """Answer a reserved read_file path: the range as strict UTF-8, or a refusal."""
    match = _RANGE_PATH.fullmatch(raw_path)
    if match is None:
        return refusal(MALFORMED_PATH)
    artifact_id, raw_start, raw_end = match.groups()
    try:
        start, end = int(raw_start), int(raw_end)
    except ValueError:  # more digits than int() will read
        return refusal(MALFORMED_PATH)
    if end - start > max_range_bytes:
        return refusal(f"artifact range exceeds {max_range_bytes} bytes")
    try:
        data = source.read_range(artifact_id, start, end)
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return refusal("artifact range does not align to UTF-8 text")
    except AgentError as error:
        return refusal(str(error))
    record = source.ref(artifact_id)
    assert record is not None  # read_range refuses an unknown id
    payload = {
        "artifact_id": artifact_id,
        "byte_count": len(data),
        "data": text,
        "end": end,
        "sha256": record.sha256,
        "start": start,
        "total_byte_count": record.byte_count,
    }
    return StepResult(RANGE_PREFIX + _json(payload))


def bounded_observation(
    record: ArtifactRef,
    data: bytes,
    max_inline_bytes: int,
    preview_bytes: int,
    max_range_bytes: int,
) -> str:
    """The externalized observation of `data`: identity, previews at UTF-8 boundaries with
    their byte ranges, the omitted interval and one runnable range request, all within
    `max_inline_bytes` (previews shrink until the whole observation fits)."""
    _, suggested_end = head_preview(data, max_range_bytes)
    # Output that does not start with valid UTF-8 still gets a runnable (if refused) request.
    request = {
        "path": range_path(record.artifact_id, 0, max(suggested_end, 1)),
        "tool": "read_file",
    }
    for limit in range(preview_bytes, -1, -1):
        head, head_end = head_preview(data, limit)
        tail, tail_start = tail_preview(data, limit, head_end)
        payload: dict[str, Any] = {
            "artifact_id": record.artifact_id,
            "byte_count": record.byte_count,
            "head_preview": head,
            "head_range": [0, head_end],
            "omitted_range": [head_end, tail_start],
            "range_request": request,
            "sha256": record.sha256,
            "tail_preview": tail,
            "tail_range": [tail_start, record.byte_count],
        }
        observation = EXTERNALIZED_PREFIX + _json(payload)
        if len(observation.encode("utf-8")) <= max_inline_bytes:
            return observation
    raise AgentError("evidence observation limit is too small for artifact metadata")


def head_preview(data: bytes, limit: int) -> tuple[str, int]:
    """The longest valid UTF-8 prefix of at most `limit` bytes, and where it ends."""
    end = min(limit, len(data))
    while end:
        try:
            return data[:end].decode("utf-8"), end
        except UnicodeDecodeError as error:
            end = error.start
    return "", 0


def tail_preview(data: bytes, limit: int, head_end: int) -> tuple[str, int]:
    """The longest valid UTF-8 suffix of at most `limit` bytes after `head_end`, and where it
    starts."""
    start = max(head_end, len(data) - limit)
    while start < len(data):
        try:
            return data[start:].decode("utf-8"), start
        except UnicodeDecodeError as error:
            start += max(1, error.end)
    return "", len(data)


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

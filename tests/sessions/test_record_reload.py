"""A durable checkpoint reloads what it saved: the observations come back with the artifacts
they name, so a range read of one after a resume (or in a branch) works; and the KV cache saved with it
is read back only when its bytes are the ones saved."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from counterfoil.context.budget import Observation
from counterfoil.context.evidence import ArtifactRef
from counterfoil.model_state import ModelCheckpoint
from counterfoil.sessions.checkpoint import create_checkpoint, prompt_cache_name
from counterfoil.sessions.record import SessionRecord, load_record
from counterfoil.sessions.recorded_run import read_prompt_cache
from counterfoil.sessions.store import SessionStore


def artifact(text: bytes) -> ArtifactRef:
    digest = hashlib.sha256(text).hexdigest()
    return ArtifactRef(f"artifact-{digest}", len(text), digest)


def test_observations_reload_with_the_artifacts_they_name() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "goal"}]
    shown, summarized = artifact(b"long output"), artifact(b"summary")
    saved = SessionRecord(
        run_id="run-1",
        root="/project",
        log="/project/.counterfoil/receipts.jsonl",
        checkpoint=create_checkpoint("goal", messages, ModelCheckpoint(2, 0, (), (0,))),
        observations=(Observation(1, "elided", 11, True, shown, summarized),),
    )

    (observation,) = load_record(saved.to_bytes(), "run-1").observations

    assert observation.shown_artifacts() == (shown, summarized)
    assert [item.artifact_id for item in observation.shown_artifacts()] == [
        shown.artifact_id,
        summarized.artifact_id,
    ]


class CachingModel:
    """A test double of a model that keeps its KV cache in a file (mlx-lm's protocol)."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def prompt_cache_bytes(self) -> int:
        return 5

    def write_prompt_cache(self, path: str) -> None:
        Path(path).write_bytes(b"cache")

    def read_prompt_cache(self, path: str, tokens: Sequence[int]) -> None:
        self.read.append(Path(path).read_bytes().decode())


def test_a_saved_prompt_cache_is_read_only_when_its_bytes_match_their_digest(
    tmp_path: Path,
) -> None:
    sessions = SessionStore(tmp_path / ".counterfoil" / "receipts.jsonl")
    (tmp_path / ".counterfoil").mkdir()
    tokens = (1, 2, 3)
    name = prompt_cache_name(tokens)
    model = CachingModel()
    sessions.write_prompt_cache("run-1", name, model.write_prompt_cache)
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "goal"}]
    record = SessionRecord(
        run_id="run-1",
        root=str(tmp_path),
        log=str(sessions.log_path),
        checkpoint=create_checkpoint("goal", messages, ModelCheckpoint(2, 0, tokens, (3,))),
        prompt_cache=name,
        prompt_cache_sha256=sessions.file_sha256("run-1", name),
    )
    said: list[str] = []
    (sessions.run_folder("run-1") / name).write_bytes(b"other")  # same name, other bytes

    read_prompt_cache(sessions, record, model, said.append)

    assert model.read == []
    assert said == ["note: the saved prompt cache does not match its digest; not used"]

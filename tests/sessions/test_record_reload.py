"""A durable checkpoint reloads what it saved: the observations come back with the artifacts
they name, so a range read of one after a resume (or in a branch) works."""

from __future__ import annotations

import hashlib

from counterfoil.context import Observation
from counterfoil.evidence import ArtifactRef
from counterfoil.sessions.checkpoint import ModelCheckpoint, create_checkpoint
from counterfoil.sessions.record import SessionRecord, load_record


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

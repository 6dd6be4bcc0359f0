"""The exported statement names a run's model in the words every other surface uses."""

from __future__ import annotations

from pathlib import Path

from counterfoil.attestation.statement import run_entry
from counterfoil.sessions.decisions import DecisionLog
from counterfoil.sessions.store import SessionStore

RUN_ID = "a" * 32


def test_a_runs_entry_names_its_model_and_engine_as_the_tree_does(tmp_path: Path) -> None:
    sessions = SessionStore(tmp_path / "receipts.jsonl")
    sessions.run_folder(RUN_ID).mkdir(parents=True)
    identity = {
        "spec": "smol.gguf",
        "resolved": {"gguf": "/m/smol.gguf", "engine": "llama.cpp"},
        "weights_sha256": "cc324af070c2" + "0" * 52,
    }
    DecisionLog(sessions, RUN_ID).started("fix it", "editor", False, None, identity)

    entry = run_entry(sessions, RUN_ID)

    assert entry["model_said"] == "smol.gguf · weights cc324af070c2 · llama.cpp"

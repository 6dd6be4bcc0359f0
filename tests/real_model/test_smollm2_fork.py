"""A fork with SmolLM2: a finished run's conversation steered two ways, each in its own copy."""

from __future__ import annotations

from pathlib import Path

from tests.support.terminal import run_cli as cli

from counterfoil.sessions.store import SessionStore

from .test_smollm2 import WRITE_GOAL


def test_a_smollm2_run_forks_into_steered_branches(smollm2: str, empty_root: Path) -> None:
    flags = ["--root", str(empty_root), "--model", smollm2, "--engine", "mlx", "--allow-writes"]
    limits = ["--max-steps", "1", "--max-tokens", "40"]
    status, output = cli(["agent", WRITE_GOAL, *flags, *limits], "n\n")
    assert "== run ended: " in output and "Traceback" not in output, output
    (run_id,) = SessionStore(empty_root / ".counterfoil" / "receipts.jsonl").run_ids()

    status, output = cli(
        ["fork", run_id, *flags, *limits, "--steer", "write it", "--steer", "stop"], "y\ny\n"
    )
    assert status == 0, output
    assert "Traceback" not in output
    assert "write it" in output and "stop" in output
    assert not (empty_root / "notes.txt").exists()  # branches write in their own copies

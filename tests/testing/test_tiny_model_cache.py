"""The tiny-model cache that benchmarks share: built beside, renamed into place once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from counterfoil.testing import tiny_model
from counterfoil.testing.tiny_model import cached_tiny_model


def test_a_tiny_model_another_process_cached_first_is_kept_and_ours_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two benchmarks side by side may build the same model at once: the first rename wins,
    and the folder it put in place (perhaps loading already) is not replaced."""
    root = tmp_path / "tiny-models"

    def cached_by_another_process_meanwhile(target: Path, **options: Any) -> Path:
        (root / "default").mkdir(parents=True)
        (root / "default" / "model.safetensors").write_text("theirs")
        Path(target).mkdir(parents=True)
        (Path(target) / "model.safetensors").write_text("ours")
        return Path(target)

    monkeypatch.setattr(tiny_model, "build_tiny_model", cached_by_another_process_meanwhile)
    folder = cached_tiny_model(root)
    assert folder == root / "default"
    assert (folder / "model.safetensors").read_text() == "theirs"
    assert list(root.iterdir()) == [folder]  # our copy is gone

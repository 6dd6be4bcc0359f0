"""A tiny random-weight Qwen3 model, built offline once per test session.

Nothing here downloads weights: the Hugging Face hub is switched offline before mlx-lm is
imported, and every model is a directory written by `build_tiny_model`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from counterfoil.models import ProgressCallback
    from counterfoil.models.mlx.mlx import MLXGenerate

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

SYSTEM_PROMPT = (
    "You are a coding agent. Inspect before you edit. Reply with exactly one JSON object "
    'per turn, for example {"tool":"read_file","path":"app.py"}, and finish with '
    '{"final":"what you did"}.'
)


@pytest.fixture(scope="session")
def mlx_installed() -> None:
    """Skip when the MLX extras (mlx, mlx-lm, llguidance, tokenizers) are not installed."""
    for module in ("mlx.core", "mlx_lm", "llguidance", "tokenizers"):
        pytest.importorskip(module)


@pytest.fixture(scope="session")
def tiny_model_dir(mlx_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 3 happens to pick tools before answering, so agent runs exercise approvals; the
    assertions do not depend on which actions a seed picks."""
    from counterfoil.testing.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny-qwen3", seed=3)


@pytest.fixture(scope="session")
def tiny_model_spec(tiny_model_dir: Path) -> str:
    return str(tiny_model_dir)


MakeGenerate = Callable[..., "MLXGenerate"]


@pytest.fixture
def mlx_generate(mlx_installed: None) -> MakeGenerate:
    """`mlx_generate(spec, on_progress=None, **GenerationOptions fields)`: an MLXGenerate."""
    from counterfoil.models import GenerationOptions, load_generate
    from counterfoil.models.mlx.mlx import MLXGenerate

    def make(spec: str, on_progress: ProgressCallback | None = None, **options: Any) -> MLXGenerate:
        generate = load_generate(spec, GenerationOptions(**options), on_progress=on_progress)
        assert isinstance(generate, MLXGenerate)
        return generate

    return make


TOOL_RESULTS = (
    "file app.py\nfile validate.py\ndir tests",
    'def greet(name):\n    return "Hello, " + name\n',
    "error: path is not accessible",
    "status: 0\noutput:\nall checks passed\n",
    "wrote NOTES.md",
)

Messages = list[dict[str, str]]
Converse = Callable[[Callable[[Messages], str], int], list[Messages]]


@pytest.fixture
def converse() -> Converse:
    """Drive `generate` through `turns` agent turns; return the messages each turn saw."""

    def run(generate: Callable[[Messages], str], turns: int) -> list[Messages]:
        messages: Messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Change the greeting to Welcome and validate."},
        ]
        seen: list[Messages] = []
        for turn in range(turns):
            seen.append([dict(message) for message in messages])
            response = generate(list(messages))
            messages.append({"role": "assistant", "content": response})
            result = TOOL_RESULTS[turn % len(TOOL_RESULTS)]
            messages.append({"role": "user", "content": "Tool result:\n" + result})
        return seen

    return run

"""A local model states its context window; `contextTokens` overrides it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from counterfoil.settings.table import Settings

MakeGenerate = Callable[..., Any]

WINDOW = 32768  # the tiny model's max_position_embeddings


def test_a_local_model_states_its_window_less_room_for_one_response(
    mlx_generate: MakeGenerate, tiny_model_spec: str
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=64, constrain=False)
    assert generate.context_tokens == WINDOW - 64
    assert Settings(max_tokens=64).limits(generate).max_context_tokens == WINDOW - 64


def test_the_context_tokens_setting_overrides_a_local_models_window(
    mlx_generate: MakeGenerate, tiny_model_spec: str
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=64, constrain=False)
    limits = Settings(max_tokens=64, context_tokens=4096).limits(generate)
    assert limits.max_context_tokens == 4096 - 64

"""An MLX model's side of the checkpoint protocol: its cached token prefix and layer offsets,
and its KV cache written to a file and read back by a fresh model, which then prefills only
what is new."""

from __future__ import annotations

from pathlib import Path

from conftest import SYSTEM_PROMPT, MakeGenerate
from counterfoil.sessions.checkpoint import KeepsPromptCache, SavesCheckpoints

MESSAGES = [
    {"role": "system", "content": SYSTEM_PROMPT},
    {"role": "user", "content": "List the project files."},
]


def test_a_fresh_model_resumes_from_the_saved_kv_cache(
    mlx_generate: MakeGenerate, tiny_model_spec: str, tmp_path: Path
) -> None:
    first = mlx_generate(tiny_model_spec, max_tokens=4, constrain=False)
    response = first(list(MESSAGES))
    conversation = [
        *MESSAGES,
        {"role": "assistant", "content": response},
        {"role": "user", "content": "Tool result:\nfile app.py"},
    ]
    assert isinstance(first, SavesCheckpoints) and isinstance(first, KeepsPromptCache)
    state = first.save_checkpoint(conversation)
    path = tmp_path / "cache.safetensors"
    first.write_prompt_cache(str(path))

    fresh = mlx_generate(tiny_model_spec, max_tokens=4, constrain=False)
    fresh.read_prompt_cache(str(path), state.cached_token_ids)
    fresh(conversation)
    cold = mlx_generate(tiny_model_spec, max_tokens=4, constrain=False)
    cold(conversation)

    assert state.conversation_position == 4
    assert len(state.cached_token_ids) >= first.stats[0].prompt_tokens
    assert set(state.layer_offsets) == {len(state.cached_token_ids)}
    assert fresh.stats[0].prefilled_tokens < cold.stats[0].prefilled_tokens
    assert fresh.stats[0].token_ids == cold.stats[0].token_ids

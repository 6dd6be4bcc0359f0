"""KvPrefixGenerator over a real mlx-lm model and its caches (the tiny offline Qwen3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from counterfoil.errors import AgentError

MESSAGES = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "set answer = 2 in app.py"},
    {"role": "assistant", "content": '{"tool":"read_file","path":"app.py"}'},
    {"role": "user", "content": "Tool result:\nanswer = 1\n"},
]


def _steered(text: str) -> list[dict[str, str]]:
    return [*MESSAGES, {"role": "user", "content": f"Operator steering:\n{text}"}]


@pytest.fixture(scope="module")
def loaded(tiny_model_dir: Path) -> tuple[Any, ...]:
    from mlx_lm import load

    return load(str(tiny_model_dir))


def test_forks_reuse_the_prefix_and_answer_as_a_fresh_prefill_would(
    loaded: tuple[object, object],
) -> None:
    from counterfoil.models.mlx.kv_prefix import KvPrefixGenerator

    model, tokenizer = loaded
    shared = KvPrefixGenerator(model, tokenizer, max_tokens=8)
    checkpoint = shared.save_checkpoint(MESSAGES)
    answers = []
    for text in ("validate", "inspect", "validate"):
        branch = shared.fork()
        branch.restore_checkpoint(checkpoint)
        answers.append(branch(_steered(text)))
        assert branch.reuse.reused_tokens == len(checkpoint.cached_token_ids)
    fresh = KvPrefixGenerator(model, tokenizer, max_tokens=8)
    fresh_checkpoint = fresh.save_checkpoint(MESSAGES)
    alone = fresh.fork()
    alone.restore_checkpoint(fresh_checkpoint)

    assert answers[0] == answers[2] == alone(_steered("validate"))
    assert set(checkpoint.layer_offsets) == {len(checkpoint.cached_token_ids)}


def test_a_prompt_that_does_not_extend_the_prefix_is_refused(
    loaded: tuple[object, object],
) -> None:
    from counterfoil.models.mlx.kv_prefix import KvPrefixGenerator

    model, tokenizer = loaded
    generator = KvPrefixGenerator(model, tokenizer, max_tokens=4)
    checkpoint = generator.save_checkpoint(MESSAGES)
    branch = generator.fork()
    branch.restore_checkpoint(checkpoint)

    with pytest.raises(AgentError, match="does not extend the saved token prefix"):
        branch([{"role": "system", "content": "changed"}, *MESSAGES[1:]])

from __future__ import annotations

from collections.abc import Callable

import pytest

from counterfoil.models.mlx.mlx import MLXGenerate

MakeGenerate = Callable[..., MLXGenerate]

Messages = list[dict[str, str]]
Converse = Callable[..., list[Messages]]


def _shared_prefix(first: list[int], second: list[int]) -> int:
    length = 0
    for left, right in zip(first, second):
        if left != right:
            break
        length += 1
    return length


@pytest.mark.parametrize("constrain", [True, False], ids=["constrained", "free"])
def test_cached_turns_match_fresh_prefill_and_prefill_only_the_new_suffix(
    tiny_model_spec: str, mlx_generate: MakeGenerate, converse: Converse, constrain: bool
) -> None:
    cached = mlx_generate(tiny_model_spec, max_tokens=32, constrain=constrain)
    turns = converse(cached, 6)
    fresh = mlx_generate(
        tiny_model_spec, max_tokens=32, constrain=constrain, reuse_prompt_cache=False
    )
    for messages in turns:
        fresh(messages)

    for turn, (with_cache, without) in enumerate(zip(cached.stats, fresh.stats)):
        assert with_cache.token_ids == without.token_ids, f"turn {turn} diverged"
        assert without.prefilled_tokens == without.prompt_tokens

    previous: list[int] = []
    for turn, messages in enumerate(turns):
        prompt = cached.prompt_tokens(messages)
        stats = cached.stats[turn]
        assert stats.prompt_tokens == len(prompt)
        expected = len(prompt) - min(_shared_prefix(previous, prompt), len(prompt) - 1)
        assert stats.prefilled_tokens == expected, f"turn {turn}"
        previous = prompt + list(stats.token_ids)

    later = cached.stats[1:]
    assert all(stats.prefilled_tokens < stats.prompt_tokens for stats in later)
    total_cached = sum(stats.prefilled_tokens for stats in cached.stats)
    total_fresh = sum(stats.prefilled_tokens for stats in fresh.stats)
    assert total_cached * 2 < total_fresh


def test_whole_prompt_cached_backs_off_one_token(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=16, constrain=False)
    messages = [{"role": "user", "content": "What is in app.py?"}]
    first = generate(messages)
    second = generate(messages)
    assert generate.stats[1].prefilled_tokens == 1
    assert first == second
    assert generate.stats[0].token_ids == generate.stats[1].token_ids


def test_edited_history_trims_to_the_shared_prefix(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=16)
    messages = [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": "Read app.py and tell me what it does."},
    ]
    generate(messages)
    edited = [messages[0], {"role": "user", "content": "Read validate.py instead."}]
    generate(edited)
    prompt = generate.prompt_tokens(edited)
    shared = _shared_prefix(generate.prompt_tokens(messages), prompt)
    assert generate.stats[1].prefilled_tokens == len(prompt) - shared

    fresh = mlx_generate(tiny_model_spec, max_tokens=16, reuse_prompt_cache=False)
    fresh(edited)
    assert fresh.stats[0].token_ids == generate.stats[1].token_ids


def test_cache_holds_prompt_and_every_generated_token(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=20)
    generate([{"role": "user", "content": "hello"}])
    stats = generate.stats[-1]
    assert generate.prompt_cache.offset == stats.prompt_tokens + stats.generated_tokens
    assert len(generate.prompt_cache.tokens) == generate.prompt_cache.offset

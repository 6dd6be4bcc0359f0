from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from counterfoil.models import ModelProgress
from counterfoil.models.mlx.mlx import MLXGenerate

MakeGenerate = Callable[..., MLXGenerate]

MESSAGES = [
    {"role": "system", "content": "Reply with one JSON object."},
    {"role": "user", "content": "List the files."},
]


def test_chat_template_ends_with_the_assistant_turn_and_an_empty_think_block(
    tiny_model_spec: str,
    mlx_generate: MakeGenerate,
) -> None:
    generate = mlx_generate(tiny_model_spec, enable_thinking=False)
    text = generate.loaded.tokenizer.decode(generate.prompt_tokens(MESSAGES))
    assert text.startswith("<|im_start|>system\nReply with one JSON object.<|im_end|>\n")
    assert "<|im_start|>user\nList the files.<|im_end|>\n" in text
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_chat_template_leaves_thinking_to_the_model_when_enabled(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, enable_thinking=True)
    text = generate.loaded.tokenizer.decode(generate.prompt_tokens(MESSAGES))
    assert text.endswith("<|im_start|>assistant\n")


def test_streamed_pieces_add_up_to_the_returned_action(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    reports: list[ModelProgress] = []
    generate = mlx_generate(tiny_model_spec, max_tokens=32, on_progress=reports.append)
    response = generate(MESSAGES)
    pieces = [report.text for report in reports if report.state == "generating"]
    assert len(pieces) > 1
    assert "".join(pieces).strip() == response


def test_generation_stops_at_eos_and_leaves_it_out(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=64)
    response = generate(MESSAGES)
    stats = generate.stats[-1]
    assert stats.finish_reason == "stop"
    assert stats.generated_tokens < 64
    assert stats.token_ids[-1] in generate.loaded.tokenizer.eos_token_ids
    assert "<|im_end|>" not in response
    json.loads(response)


def test_max_tokens_bounds_an_unconstrained_response(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, max_tokens=12, constrain=False)
    generate(MESSAGES)
    assert generate.stats[-1].generated_tokens <= 12


def test_greedy_decoding_is_deterministic(tiny_model_spec: str, mlx_generate: MakeGenerate) -> None:
    first = mlx_generate(tiny_model_spec, max_tokens=24, constrain=False)
    second = mlx_generate(tiny_model_spec, max_tokens=24, constrain=False)
    first(MESSAGES)
    second(MESSAGES)
    assert first.stats[-1].token_ids == second.stats[-1].token_ids


def test_thinking_block_is_streamed_but_not_returned(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, enable_thinking=True)
    tokenizer = generate.loaded.tokenizer
    ids = tokenizer.encode("<think>\nread it first\n</think>\n\n", add_special_tokens=False)
    ids += tokenizer.encode('{"final":"done"}', add_special_tokens=False)
    ids += sorted(tokenizer.eos_token_ids)
    assert generate.action_text(ids) == '{"final":"done"}'


def test_unfinished_thinking_returns_no_action(
    tiny_model_spec: str, mlx_generate: MakeGenerate
) -> None:
    generate = mlx_generate(tiny_model_spec, enable_thinking=True)
    tokenizer = generate.loaded.tokenizer
    ids = tokenizer.encode("<think>\nstill thinking", add_special_tokens=False)
    assert generate.action_text(ids) == ""


@pytest.mark.parametrize("max_tokens", [24, 160])
def test_constrained_thinking_response_ends_with_a_valid_action(
    tiny_model_spec: str, mlx_generate: MakeGenerate, max_tokens: int
) -> None:
    from counterfoil import parse_action

    streamed: list[ModelProgress] = []
    generate = mlx_generate(
        tiny_model_spec, enable_thinking=True, max_tokens=max_tokens, on_progress=streamed.append
    )
    response = generate(MESSAGES)
    parse_action(response)
    assert generate.stats[-1].generated_tokens <= max_tokens

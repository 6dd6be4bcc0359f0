"""Prompt-lookup decoding: the same tokens as plain greedy decoding, the same KV cache after,
drafts cut where the action grammar forbids them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from counterfoil.cli.main import build_parser
from counterfoil.cli.setting_flags import agent_settings
from counterfoil.models import GenerationOptions
from counterfoil.models.mlx.mlx import MLXGenerate
from counterfoil.models.mlx.prompt_lookup import (
    DraftLength,
    LookupConfig,
    LookupStats,
    NgramIndex,
    json_string_sources,
    stream_generate_with_lookup,
)

MakeGenerate = Callable[..., MLXGenerate]
Converse = Callable[[Callable[[list[dict[str, str]]], str], int], list[list[dict[str, str]]]]

MESSAGES = [
    {"role": "system", "content": "Reply with one JSON object."},
    {"role": "user", "content": "Read app.py, then change the greeting."},
    {"role": "assistant", "content": '{"tool":"read_file","path":"app.py"}'},
    {
        "role": "user",
        "content": 'Tool result:\ndef greet(name):\n    return "Hello, " + name\n\n'
        'def main():\n    print(greet("world"))\n',
    },
]


# The pieces, without a model


def test_a_draft_follows_the_latest_earlier_occurrence_of_the_longest_matching_tail() -> None:
    index = NgramIndex([1, 2, 3, 9, 2, 3, 7, 8, 5, 2, 3], max_ngram=3)
    assert index.draft(3) == [7, 8, 5]  # "2 3" last seen before 7 8 5; "5 2 3" never
    index.append(9)
    assert index.draft(2) == [2, 3]  # "2 3 9" seen once, before 2 3


def test_no_draft_when_the_tail_never_occurred_before() -> None:
    assert NgramIndex([1, 2, 3], max_ngram=3).draft(4) == []


RAW_NEWLINE, BACKSLASH, LETTER_N = 10, 11, 12


def test_a_draft_goes_past_a_line_end_in_the_text_as_it_reads_inside_a_json_string() -> None:
    conversation = [5, 6, RAW_NEWLINE, 7, 8]  # a file read: a raw newline between two lines
    escaped = [5, 6, BACKSLASH, LETTER_N, 7, 8]  # the same file inside a JSON string
    index = NgramIndex(conversation, max_ngram=3, sources=[escaped])
    for token in (5, 6, BACKSLASH, LETTER_N):  # the action has copied the first line and `\n`
        index.append(token)
    assert index.draft(2) == [7, 8]
    assert NgramIndex([*conversation, 5, 6, BACKSLASH, LETTER_N], max_ngram=3).draft(2) == []


def test_a_draft_prefers_the_json_string_text_to_the_raw_conversation() -> None:
    index = NgramIndex([5, 6, RAW_NEWLINE, 7], max_ngram=3, sources=[[5, 6, BACKSLASH, 9]])
    index.append(5)
    index.append(6)
    assert index.draft(2) == [BACKSLASH, 9]


def test_a_draft_prefers_the_response_itself_to_the_other_sources() -> None:
    index = NgramIndex([1], max_ngram=2, sources=[[5, 6, BACKSLASH]])
    for token in (5, 6, 4, 3, 5, 6):  # the response wrote 5 6 4 once already (the edit's old)
        index.append(token)
    assert index.draft(2) == [4, 3]


def test_a_draft_that_runs_into_the_tail_goes_on_repeating_the_text() -> None:
    index = NgramIndex([9, 1, 2, 3, 1, 2, 3, 1, 2], max_ngram=2)
    assert index.draft(5) == [3, 1, 2, 3, 1]


def test_json_string_sources_are_the_texts_that_read_differently_inside_a_json_string() -> None:
    def encode(text: str) -> list[int]:
        return list(text.encode())

    texts = ["plain words", 'line\nand "quoted"\n']
    assert json_string_sources(encode, texts) == [list(b'line\\nand \\"quoted\\"\\n')]


def test_draft_length_grows_on_full_acceptance_and_shrinks_on_rejection() -> None:
    lengths = DraftLength(LookupConfig(first_draft=4, max_draft=12))
    lengths.record(4, 4)
    assert lengths.length == 8
    lengths.record(8, 8)
    assert lengths.length == 12
    lengths.record(12, 2)
    assert lengths.length == 3


def test_drafting_pauses_after_drafts_keep_failing_and_longer_each_time() -> None:
    lengths = DraftLength(LookupConfig(patience=2, first_pause=8, max_pause=32))
    lengths.record(4, 0)
    assert lengths.paused_for == 0
    lengths.record(1, 0)
    assert lengths.paused_for == 8
    lengths.decoded_plainly(8)
    lengths.record(1, 0)
    lengths.record(1, 0)
    assert lengths.paused_for == 16


# Against the model


def _decode(
    loaded: Any,
    prompt: list[int],
    *,
    lookup_context: list[int] | None,
    processors: list[Any] | None = None,
    max_tokens: int = 96,
    cache: list[Any] | None = None,
    stats: LookupStats | None = None,
    model: Any = None,
) -> tuple[list[int], list[Any]]:
    """Greedy tokens for `prompt` from a fresh cache; with lookup over `lookup_context` unless
    it is None. Returns the tokens and the cache."""
    import mlx.core as mx
    from mlx_lm import stream_generate
    from mlx_lm.models.cache import make_prompt_cache
    from mlx_lm.sample_utils import make_sampler

    cache = cache if cache is not None else make_prompt_cache(loaded.model)
    decode = (
        stream_generate
        if lookup_context is None
        else stream_generate_with_lookup(lookup_context, stats, LookupConfig(patience=1000))
    )
    tokens = [
        int(response.token)
        for response in decode(
            model or loaded.model,
            loaded.tokenizer,
            mx.array(prompt),
            max_tokens=max_tokens,
            sampler=make_sampler(temp=0.0),
            logits_processors=processors,
            prompt_cache=cache,
        )
    ]
    return tokens, cache


def _perturbed(tokens: list[int], every: int, replacement: int) -> list[int]:
    return [replacement if i % every == every - 1 else token for i, token in enumerate(tokens)]


@pytest.fixture
def loaded(tiny_model_spec: str, mlx_generate: MakeGenerate) -> Any:
    return mlx_generate(tiny_model_spec).loaded


@pytest.fixture
def prompt(loaded: Any) -> list[int]:
    return [
        int(token)
        for token in loaded.tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True)
    ]


def test_drafts_copied_from_the_conversation_give_the_plain_tokens(
    loaded: Any, prompt: list[int]
) -> None:
    plain, _ = _decode(loaded, prompt, lookup_context=None)
    # The conversation holds the model's own answer with every 7th token changed: many drafted
    # tokens are accepted, and drafts are rejected at the changed ones.
    copied = _perturbed(plain, 7, prompt[0])
    stats = LookupStats()
    drafted, _ = _decode(loaded, prompt, lookup_context=copied + prompt, stats=stats)
    assert drafted == plain
    assert stats.accepted > len(plain) // 3
    assert stats.drafted > stats.accepted


def test_the_cache_is_rolled_back_exactly_past_rejected_drafts(
    loaded: Any, prompt: list[int]
) -> None:
    import numpy as np

    plain, plain_cache = _decode(loaded, prompt, lookup_context=None)
    stats = LookupStats()
    copied = _perturbed(plain, 5, prompt[0])
    _, cache = _decode(loaded, prompt, lookup_context=copied + prompt, stats=stats)
    assert stats.drafted > stats.accepted > 0
    assert [layer.offset for layer in cache] == [layer.offset for layer in plain_cache]
    assert cache[0].offset == len(prompt) + len(plain)
    for ours, theirs in zip(cache, plain_cache, strict=True):
        for mine, expected in zip(ours.state, theirs.state, strict=True):
            # One pass over several tokens and one token at a time round differently under a
            # threaded BLAS (OpenBLAS); the positions kept are the same ones, to float rounding.
            assert np.allclose(np.array(mine), np.array(expected), rtol=1e-5, atol=1e-5)


def test_constrained_drafts_give_the_plain_constrained_tokens(
    loaded: Any, prompt: list[int]
) -> None:
    grammar = loaded.action_grammar(None, ())
    plain, _ = _decode(loaded, prompt, lookup_context=None, processors=[grammar.processor(96)])
    stats = LookupStats()
    copied = _perturbed(plain, 6, prompt[0])
    drafted, _ = _decode(
        loaded,
        prompt,
        lookup_context=copied + prompt,
        processors=[grammar.processor(96)],
        stats=stats,
    )
    assert drafted == plain
    assert stats.accepted > 0


class _Recording:
    """The model, noting every token it is given."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.fed: list[int] = []

    def __call__(self, inputs: Any, cache: Any = None) -> Any:
        self.fed.extend(int(token) for token in inputs.reshape(-1).tolist())
        return self.model(inputs, cache=cache)

    @property
    def layers(self) -> Any:
        return self.model.layers


def test_a_draft_the_grammar_forbids_is_cut_there_and_never_verified(
    loaded: Any, prompt: list[int]
) -> None:
    grammar = loaded.action_grammar(None, ())
    plain, _ = _decode(loaded, prompt, lookup_context=None, processors=[grammar.processor(96)])
    forbidden = grammar.think_start_id  # a special token: never part of an action's JSON
    assert forbidden is not None and forbidden not in plain and forbidden not in prompt
    copied = _perturbed(plain, 6, forbidden)
    stats = LookupStats()
    recording = _Recording(loaded.model)
    drafted, _ = _decode(
        loaded,
        prompt,
        lookup_context=copied + prompt,
        processors=[grammar.processor(96)],
        stats=stats,
        model=recording,
    )
    assert drafted == plain
    assert stats.cut_by_mask > 0
    assert forbidden not in recording.fed


def test_the_grammar_cuts_a_draft_at_its_first_forbidden_token(loaded: Any) -> None:
    import mlx.core as mx

    grammar = loaded.action_grammar(None, ())
    processor = grammar.processor(64)
    encode = loaded.tokenizer.encode
    start = encode('{"tool":"read', add_special_tokens=False)
    processor(mx.array([0]), mx.zeros((1, grammar.vocab_size)))  # the prompt: one token
    good = encode('_file","path":"a.py"}', add_special_tokens=False)
    bad = encode('_file", "path"', add_special_tokens=False)  # a space is not compact JSON
    sequence = [0, *start]
    assert processor.allowed_draft(sequence, good) == len(good)
    cut = processor.allowed_draft(sequence, bad)
    assert 0 < cut < len(bad)
    assert " " not in loaded.tokenizer.decode(bad[:cut])
    assert " " in loaded.tokenizer.decode(bad[cut : cut + 1])


def test_a_cache_that_cannot_be_trimmed_is_decoded_plainly(loaded: Any, prompt: list[int]) -> None:
    from mlx_lm.models.cache import make_prompt_cache

    window = len(prompt) // 2  # a rotating window already full: it cannot be trimmed
    plain, _ = _decode(
        loaded, prompt, lookup_context=None, cache=make_prompt_cache(loaded.model, window)
    )
    stats = LookupStats()
    drafted, _ = _decode(
        loaded,
        prompt,
        lookup_context=plain + prompt,
        cache=make_prompt_cache(loaded.model, window),
        stats=stats,
    )
    assert drafted == plain
    assert stats.verify_passes == 0


# In the MLX loop


@pytest.mark.parametrize("constrain", [True, False])
def test_agent_turns_are_identical_with_and_without_prompt_lookup(
    tiny_model_spec: str, mlx_generate: MakeGenerate, converse: Converse, constrain: bool
) -> None:
    with_lookup = mlx_generate(tiny_model_spec, max_tokens=48, constrain=constrain)
    without = mlx_generate(tiny_model_spec, max_tokens=48, constrain=constrain, prompt_lookup=False)
    converse(with_lookup, 4)
    converse(without, 4)
    assert [s.token_ids for s in with_lookup.stats] == [s.token_ids for s in without.stats]
    assert [s.prefilled_tokens for s in with_lookup.stats] == [
        s.prefilled_tokens for s in without.stats
    ]
    assert with_lookup.lookup_stats.verify_passes > 0
    assert without.lookup_stats.generated == 0


def test_no_prompt_lookup_flag_turns_lookup_off(tmp_path: Path) -> None:
    args = build_parser().parse_args(["agent", "goal", "--root", str(tmp_path)])
    assert GenerationOptions.from_settings(agent_settings(args)).prompt_lookup is True
    args = build_parser().parse_args(
        ["agent", "goal", "--root", str(tmp_path), "--no-prompt-lookup"]
    )
    assert GenerationOptions.from_settings(agent_settings(args)).prompt_lookup is False

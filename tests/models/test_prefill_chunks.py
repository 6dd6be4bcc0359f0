"""The prompt is prefilled in chunks: each reports its progress, and a stop lands between them."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest

from conftest import MakeGenerate
from counterfoil.models.mlx.prefill import (
    CHUNK_SECONDS,
    GROWTH,
    MAX_CHUNK,
    MIN_CHUNK,
    PREFILL_CHUNK,
    RATE_SHARE,
    RECENT_CHUNKS,
    next_chunk,
    rate_floor,
)
from counterfoil.models.progress import ModelProgress

LONG = [{"role": "user", "content": " ".join(f"word{index}" for index in range(600))}]


class Stopped(Exception):
    pass


def test_prefill_reports_tokens_done_of_the_total_per_chunk(
    mlx_generate: MakeGenerate, tiny_model_spec: str
) -> None:
    reports: list[ModelProgress] = []
    generate = mlx_generate(
        tiny_model_spec, on_progress=reports.append, max_tokens=2, constrain=False
    )
    generate(LONG)
    prefill = [report for report in reports if report.prefill_total is not None]
    total = generate.stats[0].prefilled_tokens - 1  # the last token starts the decoding
    done = [report.prompt_tokens or 0 for report in prefill]
    assert total > 4 * PREFILL_CHUNK
    assert done[0] == PREFILL_CHUNK and done[-1] == total
    assert all(later > earlier for earlier, later in pairwise(done))
    assert all(report.prefill_total == total for report in prefill)
    assert prefill[-1].message.startswith(f"prefill {total:,}/{total:,} tokens")


def test_a_stop_during_prefill_takes_effect_after_one_chunk_and_clears_the_cache(
    mlx_generate: MakeGenerate, tiny_model_spec: str
) -> None:
    seen: list[ModelProgress] = []

    def stop_at_first_chunk(progress: ModelProgress) -> None:
        seen.append(progress)
        if progress.prefill_total is not None:
            raise Stopped

    generate = mlx_generate(
        tiny_model_spec, on_progress=stop_at_first_chunk, max_tokens=2, constrain=False
    )
    with pytest.raises(Stopped):
        generate(LONG)
    assert [report.prompt_tokens for report in seen if report.prefill_total] == [PREFILL_CHUNK]
    assert not generate.stats
    assert generate.prompt_cache.tokens == []


def test_the_ready_report_counts_every_prefilled_token_not_only_the_last(
    mlx_generate: MakeGenerate, tiny_model_spec: str
) -> None:
    reports: list[ModelProgress] = []
    generate = mlx_generate(
        tiny_model_spec, on_progress=reports.append, max_tokens=2, constrain=False
    )
    generate(LONG)
    ready = [report for report in reports if report.state == "ready"]
    assert ready[-1].prompt_tokens == generate.stats[0].prefilled_tokens > PREFILL_CHUNK


def chunk_seconds(size: int, overhead: float = 0.1, per_token: float = 0.004) -> float:
    """A forward pass's time: a fixed overhead plus a per-token cost (the float32 path's shape)."""
    return overhead + per_token * size


def test_chunks_settle_on_the_size_that_takes_the_target_time_despite_a_fixed_overhead() -> None:
    size = PREFILL_CHUNK
    for _ in range(20):
        size = next_chunk(size, chunk_seconds(size))
    assert chunk_seconds(size) == pytest.approx(CHUNK_SECONDS, abs=0.01)
    assert size / chunk_seconds(size) > 1.5 * PREFILL_CHUNK / chunk_seconds(PREFILL_CHUNK)


def test_a_chunk_grows_at_most_by_the_growth_factor_after_a_fast_one() -> None:
    assert next_chunk(16, 0.001) == GROWTH * 16


def test_a_slow_chunk_shrinks_the_next_so_a_stop_still_lands_within_half_a_second() -> None:
    size = next_chunk(256, 2.0)
    assert size == MIN_CHUNK or size * 2.0 / 256 <= 0.5


def test_chunk_sizes_stay_within_their_bounds() -> None:
    assert next_chunk(MAX_CHUNK, 0.01) == MAX_CHUNK
    assert next_chunk(MIN_CHUNK, 100.0) == MIN_CHUNK
    assert next_chunk(16, 0.0) == GROWTH * 16


def settled_chunk(overhead: float, per_token: float) -> int:
    """The chunk size prefill settles on for a model with this fixed cost and per-token cost."""
    measured: list[tuple[int, float]] = []
    size = PREFILL_CHUNK
    for _ in range(20):
        seconds = chunk_seconds(size, overhead, per_token)
        measured.append((size, seconds))
        size = max(next_chunk(size, seconds), rate_floor(measured[-RECENT_CHUNKS:]))
    return size


def test_chunks_keep_most_of_a_whole_prefills_rate_when_one_pass_outlasts_the_target() -> None:
    overhead, per_token = 1.2, 0.046  # a 1.5B model in float32 on this CPU, roughly
    size = settled_chunk(overhead, per_token)
    whole_rate = 1 / per_token
    assert size / chunk_seconds(size, overhead, per_token) >= RATE_SHARE * whole_rate


def test_chunks_still_aim_at_the_target_time_where_a_pass_is_cheap() -> None:
    size = settled_chunk(0.01, 0.002)
    assert chunk_seconds(size, 0.01, 0.002) == pytest.approx(CHUNK_SECONDS, abs=0.02)


def test_rate_floor_waits_for_two_chunk_sizes_before_it_fits_a_line() -> None:
    assert rate_floor([(16, 1.0)]) == MIN_CHUNK
    assert rate_floor([(16, 1.0), (16, 1.1)]) == MIN_CHUNK
    # Through (16, 1.0) and (64, 3.0): 1/24 s a token, 1/3 s a pass, so 4 * (1/3) / (1/24).
    overhead, per_token = 1 / 3, 1 / 24
    wanted = RATE_SHARE / (1 - RATE_SHARE) * overhead / per_token
    assert rate_floor([(16, 1.0), (64, 3.0)]) == math.ceil(wanted - 1e-9) == 32

"""The prompt prefilled in chunks, so a stop lands between chunks and progress is reported.

mlx-lm's `stream_generate` prefills a prompt as one long computation that nothing can
interrupt: on a CPU a 2,000-token prompt is seconds to minutes of silence. Here all but the
last prompt token go through the model in chunks (the first of `PREFILL_CHUNK` tokens, each
next one sized by `next_chunk` from the time the last one took, never below `rate_floor`, the
size that keeps most of a whole prefill's rate); after each, a
`generating` report carries the count done of the total and the rate, and that report is where
a stop takes effect (the daemon's listener raises, and Ctrl-C's KeyboardInterrupt lands between
chunks). The last token is left for `stream_generate`, which then starts decoding at once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from ..progress import ModelProgress, PrefillReport, ProgressCallback

# The first chunk's tokens; later chunks are sized to take about CHUNK_SECONDS, so a stop
# lands within about that. Each forward pass costs a fixed overhead besides its per-token work
# (on a CPU, hundreds of small kernels and BLAS calls), so small chunks prefill slowly: a
# target of 0.15 s kept the float32 path at 8-token chunks and a third of its large-chunk rate
# (docs/mlx.md). 0.3 s leaves room under the 0.5 s Stop budget for a chunk slower than the last
# (attention grows with the offset; a busy machine). A chunk grows at most GROWTH times the last
# (one fast measurement must not make a chunk that blows the budget) and stays within
# MIN_CHUNK..MAX_CHUNK tokens (MAX_CHUNK: mlx-lm's own prefill step).
PREFILL_CHUNK = 16
CHUNK_SECONDS = 0.3
GROWTH = 4
MIN_CHUNK, MAX_CHUNK = 8, 2048
# Where one forward pass costs more than the target whatever its size (a 1.5B model in float32
# on a CPU streams its 6 GB of weights each pass), chunks sized to the target shrink to
# MIN_CHUNK and prefill at a fifth of the whole prompt's rate. A floor keeps every chunk large
# enough to prefill at RATE_SHARE of the rate of one whole prefill, from the overhead and the
# per-token cost fitted to the chunks measured so far: Stop then waits one such chunk.
RATE_SHARE = 0.8
RECENT_CHUNKS = 6  # the chunks the fit reads (the cost per token grows with the offset)


def next_chunk(size: int, seconds: float) -> int:
    """The tokens of the next chunk after one of `size` tokens took `seconds`: the size that
    would take CHUNK_SECONDS at that rate, bounded by GROWTH, MIN_CHUNK and MAX_CHUNK. Since a
    chunk's time is a fixed overhead plus a per-token cost, repeating this converges on the
    chunk that takes CHUNK_SECONDS."""
    wanted = size * CHUNK_SECONDS / seconds if seconds > 0 else float(MAX_CHUNK)
    return max(MIN_CHUNK, min(MAX_CHUNK, GROWTH * size, int(wanted)))


def rate_floor(measured: Sequence[tuple[int, float]]) -> int:
    """The fewest tokens a chunk may hold to prefill at RATE_SHARE of the rate of one whole
    prefill, given chunks measured as (tokens, seconds): a line fitted through them gives the
    fixed overhead `o` and the per-token cost `c`, and a chunk of n keeps the share
    c·n / (o + c·n). MIN_CHUNK until two chunks of different sizes were measured, or when the
    fit finds no overhead."""
    sizes = {size for size, _ in measured}
    if len(sizes) < 2:
        return MIN_CHUNK
    count = len(measured)
    mean_size = sum(size for size, _ in measured) / count
    mean_seconds = sum(seconds for _, seconds in measured) / count
    spread = sum((size - mean_size) ** 2 for size, _ in measured)
    per_token = (
        sum((size - mean_size) * (seconds - mean_seconds) for size, seconds in measured) / spread
    )
    overhead = mean_seconds - per_token * mean_size
    if per_token <= 0 or overhead <= 0:
        return MIN_CHUNK
    wanted = RATE_SHARE / (1 - RATE_SHARE) * overhead / per_token
    return max(MIN_CHUNK, min(MAX_CHUNK, math.ceil(wanted - 1e-9)))


def prefill_in_chunks(
    model: Any,
    cache: list[Any],
    tokens: Sequence[int],
    *,
    on_progress: ProgressCallback | None = None,
    chunk: int = PREFILL_CHUNK,
    stream: Any = None,
) -> tuple[list[int], float]:
    """Run `tokens[:-1]` through `model` into `cache`; return the rest (the last token) and the
    seconds it took. `on_progress` gets one `generating` report per chunk and may raise to stop.
    """
    import mlx.core as mx

    head, rest = list(tokens[:-1]), list(tokens[-1:])
    started = time.perf_counter()
    total = len(head)
    done = 0
    measured: list[tuple[int, float]] = []
    while done < total:
        piece = mx.array(head[done : done + chunk])[None]
        chunk_started = time.perf_counter()
        if stream is not None:
            with mx.stream(stream):
                model(piece, cache=cache)
        else:
            model(piece, cache=cache)
        mx.eval([layer.state for layer in cache])
        done = min(done + chunk, total)
        size, seconds = int(piece.shape[1]), time.perf_counter() - chunk_started
        measured.append((size, seconds))
        chunk = max(next_chunk(size, seconds), rate_floor(measured[-RECENT_CHUNKS:]))
        report = PrefillReport(done, total, time.perf_counter() - started)
        if on_progress is not None:
            on_progress(
                ModelProgress(
                    "generating",
                    message=report.message(),
                    prompt_tokens=report.done,
                    prefill_total=report.total,
                    tokens_per_second=report.tokens_per_second,
                )
            )
    return rest, time.perf_counter() - started

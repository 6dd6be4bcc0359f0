"""Resuming a conversation of about 4,000 tokens from its saved KV cache versus prefilling the
same messages fresh, and what keeping the cache costs at each observation boundary.

The benchmark model (hidden 512, 8 layers, float32, 32k vocabulary) holds an agent
conversation (Counterfoil's real system prompt, tool results of about 150 tokens, one fixed
action a turn) of HISTORY_TOKENS, prefilled once; its last BOUNDARIES turns are then stepped one
by one (a model call generating GENERATED_TOKENS), and after each the KV cache is written as a
checkpoint writes it (mlx-lm's `save_prompt_cache` to a temporary file, fsync, rename), its time
set against the step's. Then, side by side TRIALS times (`--trials N`), a fresh model reads the saved cache and
answers the whole conversation, and another fresh model prefills it all: time to the
first token, and whether both generate the same tokens. Prints the tables, then one JSON line.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from blas import matmul_gflops, use_openblas
from prompt_cache import system_prompt, tool_results
from workload import bench_model_dir, sized

HISTORY_TOKENS = sized(4_000, 1_200)
GENERATED_TOKENS = sized(16, 4)
TRIALS = sized(3, 1)
BOUNDARIES = sized(3, 1)  # the last turns stepped one by one, a snapshot after each
ACTION = '{"tool":"read_file","path":"argparse.py","start_line":1,"end_line":40}'


def main() -> None:
    blas = use_openblas()
    from counterfoil.models import GenerationOptions, load_generate
    from counterfoil.models.mlx.mlx import MLXGenerate
    from counterfoil.sessions.checkpoint import prompt_cache_name
    from counterfoil.sessions.store import SessionStore

    model_dir = bench_model_dir()
    options = GenerationOptions(max_tokens=GENERATED_TOKENS, constrain=False)
    model = load_generate(str(model_dir), options)
    assert isinstance(model, MLXGenerate)
    folder = Path(tempfile.mkdtemp())
    (folder / "receipts.jsonl").touch()
    sessions = SessionStore(folder / "receipts.jsonl")
    messages = [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": "Find where the parser handles abbreviations and fix it."},
    ]
    history = [
        (
            {"role": "assistant", "content": ACTION},
            {"role": "user", "content": "Tool result:\n" + r},
        )
        for r in tool_results(400)
    ]
    turns = 0
    while model.count_tokens(messages) < HISTORY_TOKENS:
        messages += history[turns]
        turns += 1
    model(list(messages[: -2 * BOUNDARIES]))  # the history up to the last few boundaries
    boundaries: list[tuple[int, int, float, float]] = []  # tokens, bytes, write s, step s
    for end in range(len(messages) - 2 * BOUNDARIES + 2, len(messages) + 1, 2):
        started = time.perf_counter()
        model(list(messages[: end - 2]))
        step = time.perf_counter() - started
        state = model.save_checkpoint(messages[:end])
        name = prompt_cache_name(state.cached_token_ids)
        started = time.perf_counter()
        sessions.write_prompt_cache("bench", name, model.write_prompt_cache)
        written = time.perf_counter() - started
        size = (sessions.run_folder("bench") / name).stat().st_size
        boundaries.append((len(state.cached_token_ids), size, written, step))
        print(
            f"boundary {len(boundaries)}: written in {written:.3f} s, step {step:.3f} s", flush=True
        )
    path = str(sessions.run_folder("bench") / name)
    tokens = state.cached_token_ids

    resumed_seconds: list[float] = []
    fresh_seconds: list[float] = []
    identical = True
    prefilled = (0, 0)
    trials = int(sys.argv[sys.argv.index("--trials") + 1]) if "--trials" in sys.argv else TRIALS
    for _ in range(trials):
        resumed = MLXGenerate(model.loaded, options)
        started = time.perf_counter()
        resumed.read_prompt_cache(path, tokens)
        read = time.perf_counter() - started  # counted: reading the file is part of resuming
        resumed(list(messages))
        resumed_seconds.append(read + resumed.stats[0].prefill_seconds)
        fresh = MLXGenerate(model.loaded, options)
        fresh(list(messages))
        fresh_seconds.append(fresh.stats[0].prefill_seconds)
        identical = identical and resumed.stats[0].token_ids == fresh.stats[0].token_ids
        prefilled = (resumed.stats[0].prefilled_tokens, fresh.stats[0].prefilled_tokens)
        print(
            f"trial: resumed {resumed_seconds[-1]:.3f} s, fresh {fresh_seconds[-1]:.3f} s",
            flush=True,
        )

    prompt = model.count_tokens(messages)
    print(
        f"BLAS: {blas}; 1024^2 float32 matmul {matmul_gflops():.1f} GFLOP/s; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"model: {model_dir.name}; history: {prompt} prompt tokens, {turns} turns")
    print(
        f"{'boundary':>8} {'tokens':>6} {'snapshot MB':>11} {'write s':>8} {'step s':>7} {'%':>5}"
    )
    for number, (count, size, written, step) in enumerate(boundaries, start=1):
        print(
            f"{number:>8} {count:>6} {size / 1e6:>11.1f} {written:>8.3f} {step:>7.3f} "
            f"{100 * written / step:>5.1f}"
        )
    print(f"{'trial':>5} {'resumed ttft s':>14} {'fresh ttft s':>12}")
    for number, (resumed_s, fresh_s) in enumerate(zip(resumed_seconds, fresh_seconds), start=1):
        print(f"{number:>5} {resumed_s:>14.3f} {fresh_s:>12.3f}")
    speedup = statistics.median(f / r for f, r in zip(fresh_seconds, resumed_seconds))
    shares = [written / step for _, _, written, step in boundaries]
    print(
        f"time to first token: {speedup:.1f}x faster resumed (prefilled {prefilled[0]} "
        f"tokens instead of {prefilled[1]}); same tokens: {identical}"
    )
    figures = {
        "benchmark": "resume",
        "history_prompt_tokens": prompt,
        "resumed_ttft_seconds": round(statistics.median(resumed_seconds), 4),
        "fresh_ttft_seconds": round(statistics.median(fresh_seconds), 4),
        "ttft_speedup": round(speedup, 2),
        "resumed_prefilled_tokens": prefilled[0],
        "fresh_prefilled_tokens": prefilled[1],
        "identical_tokens": identical,
        "snapshot_bytes": boundaries[-1][1],
        "snapshot_write_seconds_median": round(statistics.median(b[2] for b in boundaries), 4),
        "snapshot_write_share_of_step_median": round(statistics.median(shares), 4),
        "snapshot_write_share_of_step_max": round(max(shares), 4),
        "boundaries": len(boundaries),
        "blas": blas,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

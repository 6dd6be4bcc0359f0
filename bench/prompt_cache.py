"""Prompt-cache reuse across agent turns versus re-prefilling the whole history each turn.

A 12-turn agent conversation (Counterfoil's real system prompt, 40 generated and about 150
tool-result tokens a turn) on the random-weight benchmark model (hidden 512, 8 layers,
float32, 32k vocabulary). Both runs see the same messages, turn by turn side by side; greedy
tokens must be identical. Prefill time is time to the first token; decoding the 40 tokens a
turn costs both runs the same. Prints a table, then one JSON line of the figures.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from blas import matmul_gflops, use_openblas
from workload import bench_model_dir

TURNS = 12
GENERATED_TOKENS = 40
TOOL_RESULT_CHARS = 520


def tool_results() -> list[str]:
    source = Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"
    text = source.read_text(encoding="utf-8")
    return [text[i * TOOL_RESULT_CHARS : (i + 1) * TOOL_RESULT_CHARS] for i in range(TURNS)]


def system_prompt() -> str:
    from counterfoil import ToolPolicy, Workspace, build_system_prompt

    with tempfile.TemporaryDirectory() as root:
        policy = ToolPolicy(
            Path(root), allow_writes=True, allowed_commands=(("python", "validate.py"),)
        )
        return str(build_system_prompt(Workspace(policy)))


def main() -> None:
    blas = use_openblas()
    from counterfoil.models import GenerationOptions, load_generate
    from counterfoil.models.mlx import MLXGenerate

    model_dir = bench_model_dir()
    options = GenerationOptions(max_tokens=GENERATED_TOKENS, constrain=False)
    cached = load_generate(str(model_dir), options)
    naive = load_generate(str(model_dir), replace(options, reuse_prompt_cache=False))
    assert isinstance(cached, MLXGenerate) and isinstance(naive, MLXGenerate)
    naive([{"role": "user", "content": "warm up"}])
    naive.stats.clear()

    messages = [
        {"role": "system", "content": system_prompt()},
        {
            "role": "user",
            "content": "Change the greeting to Welcome, record why in NOTES.md, "
            "then run python validate.py.",
        },
    ]
    # Side by side, turn by turn, so both runs see the same load on the machine.
    seconds_cached = seconds_naive = 0.0
    for result in tool_results():
        started = time.perf_counter()
        response = cached(list(messages))
        seconds_cached += time.perf_counter() - started
        started = time.perf_counter()
        naive(list(messages))
        seconds_naive += time.perf_counter() - started
        messages += [
            {"role": "assistant", "content": response},
            {"role": "user", "content": "Tool result:\n" + result},
        ]

    identical = all(a.token_ids == b.token_ids for a, b in zip(cached.stats, naive.stats))
    print(
        f"BLAS: {blas}; 1024^2 float32 matmul {matmul_gflops():.1f} GFLOP/s; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"model: {model_dir.name}; prompt at turn 1: {cached.stats[0].prompt_tokens} tokens")
    print(
        f"{'turn':>4} {'prompt':>6} {'prefilled':>9} {'prefilled':>9} {'prefill s':>9} "
        f"{'prefill s':>9} {'total s':>7} {'total s':>7}"
    )
    print(
        f"{'':>4} {'':>6} {'cached':>9} {'naive':>9} {'cached':>9} {'naive':>9} "
        f"{'cached':>7} {'naive':>7}"
    )
    for turn, (a, b) in enumerate(zip(cached.stats, naive.stats), start=1):
        print(
            f"{turn:>4} {a.prompt_tokens:>6} {a.prefilled_tokens:>9} {b.prefilled_tokens:>9} "
            f"{a.prefill_seconds:>9.2f} {b.prefill_seconds:>9.2f} {a.seconds:>7.2f} "
            f"{b.seconds:>7.2f}"
        )
    prefilled_cached = sum(s.prefilled_tokens for s in cached.stats)
    prefilled_naive = sum(s.prefilled_tokens for s in naive.stats)
    prefill_cached = sum(s.prefill_seconds for s in cached.stats)
    prefill_naive = sum(s.prefill_seconds for s in naive.stats)
    generated = sum(s.generated_tokens for s in cached.stats)
    print(
        f"prefilled tokens: cached {prefilled_cached}, naive {prefilled_naive} "
        f"({prefilled_naive / prefilled_cached:.2f}x fewer); generated {generated} each"
    )
    print(
        f"prefill time: cached {prefill_cached:.1f} s, naive {prefill_naive:.1f} s "
        f"({prefill_naive / prefill_cached:.2f}x)"
    )
    print(
        f"total time: cached {seconds_cached:.1f} s, naive {seconds_naive:.1f} s "
        f"({seconds_naive / seconds_cached:.2f}x); identical tokens: {identical}"
    )
    figures = {
        "benchmark": "prompt_cache",
        "turns": TURNS,
        "generated_tokens": generated,
        "prefilled_tokens_cached": prefilled_cached,
        "prefilled_tokens_naive": prefilled_naive,
        "prefill_token_ratio": round(prefilled_naive / prefilled_cached, 2),
        "prefill_seconds_cached": round(prefill_cached, 2),
        "prefill_seconds_naive": round(prefill_naive, 2),
        "prefill_time_ratio": round(prefill_naive / prefill_cached, 2),
        "seconds_cached": round(seconds_cached, 2),
        "seconds_naive": round(seconds_naive, 2),
        "time_ratio": round(seconds_naive / seconds_cached, 2),
        "identical_tokens": identical,
        "blas": "openblas" if "OpenBLAS" in blas else "default",
    }
    print(json.dumps(figures))
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()

"""Prompt-cache reuse across agent turns versus re-prefilling the whole history each turn.

A 12-turn agent conversation (Counterfoil's real system prompt, 40 generated and about 150
tool-result tokens a turn) on the random-weight benchmark model (hidden 512, 8 layers,
float32, 32k vocabulary). Both runs see the same messages, turn by turn side by side; greedy
tokens must be identical. Prefill time is time to the first token; decoding the 40 tokens a
turn costs both runs the same.

Then a long run: 30 turns within a context budget of LONG_BUDGET tokens, counted by the
model's tokenizer, with old observations elided by `ContextWindow` in large steps (above 85%
of the budget, down to 50%) against eliding a little every turn once full (a sliding window,
85% to 85%). Both keep the prompt cache; the figure is the tokens each prefilled. Prints the
tables, then one JSON line of the figures. `--long` runs only the long run.
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
LONG_TURNS = 30
LONG_GENERATED_TOKENS = 4
LONG_BUDGET = 1_500


def tool_results(turns: int = TURNS) -> list[str]:
    source = Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"
    text = source.read_text(encoding="utf-8")
    return [text[i * TOOL_RESULT_CHARS : (i + 1) * TOOL_RESULT_CHARS] for i in range(turns)]


def long_run(model_dir: Path, high: float, low: float) -> tuple[int, int, int, float]:
    """Prefilled tokens, elisions, largest prompt and prefill seconds of one long run."""
    from counterfoil.actions import ToolAction
    from counterfoil.context import ContextWindow
    from counterfoil.models import GenerationOptions, load_generate

    options = GenerationOptions(max_tokens=LONG_GENERATED_TOKENS, constrain=False)
    generate = load_generate(str(model_dir), options)
    messages = [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": "Find where the parser handles abbreviations and fix it."},
    ]
    window = ContextWindow(messages, LONG_BUDGET, generate.count_tokens, high=high, low=low)
    for turn, result in enumerate(tool_results(LONG_TURNS), start=1):
        if not window.fits():
            raise SystemExit(f"the budget cannot hold turn {turn}")
        response = generate(list(messages))
        messages += [
            {"role": "assistant", "content": response},
            {"role": "user", "content": "Tool result:\n" + result},
        ]
        window.observed(ToolAction("read_file", {"path": f"argparse_{turn}.py"}), result)
    stats = generate.stats
    return (
        sum(s.prefilled_tokens for s in stats),
        window.elisions,
        max(s.prompt_tokens for s in stats),
        sum(s.prefill_seconds for s in stats),
    )


def system_prompt() -> str:
    from counterfoil import ToolPolicy, Workspace, build_system_prompt

    with tempfile.TemporaryDirectory() as root:
        policy = ToolPolicy(
            Path(root), allow_writes=True, allowed_commands=(("python", "validate.py"),)
        )
        return str(build_system_prompt(Workspace(policy)))


def main() -> None:
    blas = use_openblas()
    if "--long" in sys.argv[1:]:
        figures = {"benchmark": "prompt_cache_long", **long_figures(bench_model_dir())}
        print(json.dumps(figures))
        return
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
        **long_figures(model_dir),
    }
    print(json.dumps(figures))
    sys.exit(0 if identical else 1)


def long_figures(model_dir: Path) -> dict[str, object]:
    steps = long_run(model_dir, high=0.85, low=0.5)
    print(f"in steps: {steps[0]} tokens prefilled, {steps[1]} elided", flush=True)
    sliding = long_run(model_dir, high=0.85, low=0.85)
    print(f"long run: {LONG_TURNS} turns, budget {LONG_BUDGET} tokens, prompt cache kept")
    print(f"{'elision':<22} {'prefilled':>9} {'elided':>6} {'max prompt':>10} {'prefill s':>9}")
    for name, (prefilled, elided, largest, seconds) in (
        ("in steps (85% -> 50%)", steps),
        ("every turn (85%)", sliding),
    ):
        print(f"{name:<22} {prefilled:>9} {elided:>6} {largest:>10} {seconds:>9.2f}")
    print(
        f"prefilled tokens: in steps {steps[0]}, every turn {sliding[0]} "
        f"({sliding[0] / steps[0]:.2f}x fewer in steps)"
    )
    return {
        "long_turns": LONG_TURNS,
        "long_budget_tokens": LONG_BUDGET,
        "long_prefilled_tokens_elision_in_steps": steps[0],
        "long_prefilled_tokens_elision_every_turn": sliding[0],
        "long_prefill_token_ratio": round(sliding[0] / steps[0], 2),
        "long_prefill_seconds_in_steps": round(steps[3], 2),
        "long_prefill_seconds_every_turn": round(sliding[3], 2),
        "long_elisions_in_steps": steps[1],
        "long_elisions_every_turn": sliding[1],
    }


if __name__ == "__main__":
    main()

"""Prompt-cache reuse across agent turns versus re-prefilling the whole history each turn.

A 12-turn agent conversation (Counterfoil's real system prompt, 40 generated and about 150
tool-result tokens a turn) on the random-weight benchmark model (hidden 512, 8 layers,
float32, 32k vocabulary). Both runs see the same messages, turn by turn side by side; greedy
tokens must be identical. Prefill time is time to the first token; decoding the 40 tokens a
turn costs both runs the same.

Then a long run (`--long` runs only it): `run_agent` on a fixture project of LONG_TURNS
files, reading one a turn, within a context budget of LONG_BUDGET tokens counted by the
model's tokenizer, on a smaller model of the same kind (hidden 256, 4 layers, the same
tokenizer) so both sides finish in minutes on two cores. The model prefills each prompt with
its prompt cache and generates LONG_GENERATED_TOKENS; the action returned is the script's, so
both runs hold the same conversation and only the elision strategy differs: in steps (above
85% of the budget, down to 50%, the default) against a little every turn once full (85% to
85%, which changes the prompt's prefix each turn). The two runs go side by side, each in its
own thread, taking turns at the model call by call, so both prefill under the same load. The
figure is the tokens each prefilled, then the seconds. Prints the tables, then one JSON line
of the figures.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from blas import matmul_gflops, use_openblas
from workload import BENCH_MODEL, bench_model_dir

TURNS = 12
GENERATED_TOKENS = 40
TOOL_RESULT_CHARS = 520
LONG_TURNS = 30
LONG_GENERATED_TOKENS = 4
LONG_BUDGET = 2_500
LONG_GOAL = "Find where the parser handles abbreviations and fix it."
LONG_SIZES = {"hidden_size": 256, "num_layers": 4}


def tool_results(turns: int = TURNS) -> list[str]:
    source = Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"
    text = source.read_text(encoding="utf-8")
    return [text[i * TOOL_RESULT_CHARS : (i + 1) * TOOL_RESULT_CHARS] for i in range(turns)]


class Baton:
    """Two runs take turns at the model, one call each, so both prefill under the same load."""

    def __init__(self) -> None:
        self._turn = 0
        self._finished = [False, False]
        self._changed = threading.Condition()

    def hold(self, side: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._turn == side or self._finished[1 - side])

    def pass_on(self, side: int, finished: bool = False) -> None:
        with self._changed:
            self._finished[side] = self._finished[side] or finished
            self._turn = 1 - side
            self._changed.notify_all()


class ScriptedTurns:
    """The real model reads each prompt, through its prompt cache, and generates a few tokens;
    the action returned is the script's, so every run holds the same conversation."""

    def __init__(self, model: Any, responses: list[str], baton: Baton, side: int) -> None:
        self.model = model
        self.responses = iter(responses)
        self.count_tokens = model.count_tokens
        self.baton = baton
        self.side = side

    def __call__(self, messages: list[dict[str, str]]) -> str:
        self.baton.hold(self.side)
        try:
            self.model(messages)
        finally:
            self.baton.pass_on(self.side)
        return next(self.responses)


def long_project(root: Path) -> list[str]:
    """LONG_TURNS files of TOOL_RESULT_CHARS each, and the script that reads them in turn."""
    responses = []
    for turn, text in enumerate(tool_results(LONG_TURNS), start=1):
        (root / f"part_{turn:02}.py").write_text(text, encoding="utf-8")
        responses.append(json.dumps({"tool": "read_file", "path": f"part_{turn:02}.py"}))
    return [*responses, json.dumps({"final": "read every part"})]


def long_run(generate: ScriptedTurns, elide_down_to: float) -> dict[str, Any]:
    """One long run: its prefilled tokens, elisions, largest prompt and model seconds."""
    from counterfoil import AgentLimits, ToolPolicy, Workspace, run_agent

    limits = AgentLimits(
        max_steps=LONG_TURNS + 1, max_context_tokens=LONG_BUDGET, elide_down_to=elide_down_to
    )
    with tempfile.TemporaryDirectory() as root:
        generate.responses = iter(long_project(Path(root)))
        workspace = Workspace(ToolPolicy(Path(root), allow_search=True))
        messages: list[dict[str, str]] = []
        run = run_agent(LONG_GOAL, generate, workspace, limits, messages=messages)
    if run.reason != "completed":
        raise SystemExit(f"the long run ended with {run.reason}: the budget cannot hold it")
    stats = generate.model.stats
    return {
        "prefilled": sum(s.prefilled_tokens for s in stats),
        "elided": sum(1 for m in messages if m["content"].startswith("Tool result:\n[read_file")),
        "largest": max(s.prompt_tokens for s in stats),
        "prefill_seconds": sum(s.prefill_seconds for s in stats),
        "seconds": sum(s.seconds for s in stats),
        "results": [event.result for event in run.events],
        "per_turn": [s.prefilled_tokens for s in stats],
    }


def side_by_side(model_dir: Path, strategies: tuple[float, float]) -> list[dict[str, Any]]:
    """Both long runs at once, each in its own thread, taking turns at the model call by call."""
    from counterfoil.models import GenerationOptions, load_generate

    options = GenerationOptions(max_tokens=LONG_GENERATED_TOKENS, constrain=False)
    baton = Baton()
    results: list[dict[str, Any] | BaseException] = [RuntimeError("not run")] * 2

    def run(side: int, generate: ScriptedTurns) -> None:
        try:
            results[side] = long_run(generate, strategies[side])
        except BaseException as error:  # noqa: BLE001 - raised again on the main thread
            results[side] = error
        finally:
            baton.pass_on(side, finished=True)

    models = [
        ScriptedTurns(load_generate(str(model_dir), options), [], baton, side) for side in (0, 1)
    ]
    threads = [threading.Thread(target=run, args=(side, models[side])) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [result for result in results if isinstance(result, dict)]


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
        figures = {"benchmark": "prompt_cache_long", **long_figures()}
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
        **long_figures(),
    }
    print(json.dumps(figures))
    sys.exit(0 if identical else 1)


def long_model_dir() -> Path:
    from counterfoil.models.tiny_model import TinyShape, cached_tiny_model

    return cached_tiny_model(shape=TinyShape(**LONG_SIZES), **BENCH_MODEL)


def long_figures() -> dict[str, object]:
    model_dir = long_model_dir()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    steps, every = side_by_side(model_dir, (0.5, 0.85))
    seconds = time.perf_counter() - started
    if steps["results"] != every["results"]:
        raise SystemExit("the two long runs saw different observations")
    print(
        f"long run: model {model_dir.name}; {LONG_TURNS} reads of {TOOL_RESULT_CHARS} "
        f"characters, budget {LONG_BUDGET} tokens, prompt cache kept; side by side, call by "
        f"call, in {seconds:.0f} s; load average {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(f"{'turn':>4} {'prefilled':>9} {'prefilled':>10}")
    print(f"{'':>4} {'in steps':>9} {'every turn':>10}")
    for turn, (a, b) in enumerate(zip(steps["per_turn"], every["per_turn"]), start=1):
        print(f"{turn:>4} {a:>9} {b:>10}")
    print(
        f"{'elision':<22} {'prefilled':>9} {'elided':>6} {'max prompt':>10} "
        f"{'prefill s':>9} {'model s':>7}"
    )
    for name, side in (("in steps (85% -> 50%)", steps), ("every turn (85%)", every)):
        print(
            f"{name:<22} {side['prefilled']:>9} {side['elided']:>6} {side['largest']:>10} "
            f"{side['prefill_seconds']:>9.2f} {side['seconds']:>7.2f}"
        )
    ratio = every["prefilled"] / steps["prefilled"]
    print(
        f"prefilled tokens: in steps {steps['prefilled']}, every turn {every['prefilled']} "
        f"({ratio:.2f}x fewer in steps)"
    )
    return {
        "long_model": model_dir.name,
        "long_turns": LONG_TURNS,
        "long_budget_tokens": LONG_BUDGET,
        "long_prefilled_tokens_elision_in_steps": steps["prefilled"],
        "long_prefilled_tokens_elision_every_turn": every["prefilled"],
        "long_prefill_token_ratio": round(ratio, 2),
        "long_prefill_seconds_in_steps": round(steps["prefill_seconds"], 2),
        "long_prefill_seconds_every_turn": round(every["prefill_seconds"], 2),
        "long_prefill_time_ratio": round(every["prefill_seconds"] / steps["prefill_seconds"], 2),
        "long_model_seconds_in_steps": round(steps["seconds"], 2),
        "long_model_seconds_every_turn": round(every["seconds"], 2),
        "long_wall_seconds": round(seconds, 1),
        "long_elided_in_steps": steps["elided"],
        "long_elided_every_turn": every["elided"],
        "long_largest_prompt_in_steps": steps["largest"],
        "long_largest_prompt_every_turn": every["largest"],
    }


if __name__ == "__main__":
    main()

"""Prompt-cache reuse across agent turns versus re-prefilling the whole history each turn.

A 12-turn agent conversation (Counterfoil's real system prompt, 40 generated and about 150
tool-result tokens a turn) on the random-weight benchmark model (hidden 512, 8 layers,
float32, 32k vocabulary). Both runs see the same messages, turn by turn side by side; greedy
tokens must be identical. Prefill time is time to the first token; decoding the 40 tokens a
turn costs both runs the same.

Then a long run (`--long` runs only it): `run_agent` on a fixture project of LONG_TURNS
turns, reading one file a turn and every LONG_COMMAND_EVERY-th turn running a command that
prints three files' worth, within a context budget of LONG_BUDGET tokens counted by the model's
tokenizer, on a smaller model of the same kind (hidden 256, 4 layers, the same tokenizer) so
all sides finish in minutes on two cores. The model prefills each prompt with its prompt cache
and generates LONG_GENERATED_TOKENS; the action returned is the script's, so every run holds
the same actions and results and only what the model is shown differs: compaction and
externalization (old commands compact to their receipt records, outputs over
LONG_INLINE_CHARS are externalized; in steps, above 85% of the budget down to 50%), against
eliding only reads as before, in steps, and a little every turn once full (85% to 85%, which
changes the prompt's prefix each turn). The runs go side by side, each in its own thread,
taking turns at the model call by call, so all prefill under the same load. The figure is the
tokens each prefilled, then the seconds. Prints the tables, then one JSON line of the figures.
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
from workload import BENCH_MODEL, QUICK, ReadsOnly, bench_model_dir, sized

TURNS = sized(12, 3)
GENERATED_TOKENS = sized(40, 8)
TOOL_RESULT_CHARS = 520
LONG_TURNS = sized(20, 4)
LONG_COMMAND_EVERY = 4
LONG_INLINE_CHARS = 1_024
LONG_GENERATED_TOKENS = 4
LONG_BUDGET = 4_000
LONG_GOAL = "Find where the parser handles abbreviations and fix it."
LONG_SIZES = {"hidden_size": 256, "num_layers": 4}


def tool_results(turns: int = TURNS) -> list[str]:
    source = Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"
    text = source.read_text(encoding="utf-8")
    return [text[i * TOOL_RESULT_CHARS : (i + 1) * TOOL_RESULT_CHARS] for i in range(turns)]


class Baton:
    """Runs take turns at the model, one call each, so all prefill under the same load."""

    def __init__(self, sides: int) -> None:
        self._turn = 0
        self._finished = [False] * sides
        self._changed = threading.Condition()

    def hold(self, side: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._turn == side)

    def pass_on(self, side: int, finished: bool = False) -> None:
        with self._changed:
            self._finished[side] = self._finished[side] or finished
            sides = len(self._finished)
            for step in range(1, sides + 1):
                if not self._finished[(side + step) % sides]:
                    self._turn = (side + step) % sides
                    break
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


SIDES = {
    "compaction": {"compaction": True, "elide_down_to": 0.5},
    "in_steps": {"compaction": False, "elide_down_to": 0.5},
    "every_turn": {"compaction": False, "elide_down_to": 0.85},
}
SIDE_NAMES = {
    "compaction": "compaction + externalized",
    "in_steps": "reads elided in steps",
    "every_turn": "reads elided every turn",
}


def long_project(root: Path) -> tuple[list[str], tuple[tuple[str, ...], ...]]:
    """LONG_TURNS files of TOOL_RESULT_CHARS each, the script that reads them in turn (or runs
    a command printing one three times), and the commands it runs."""
    responses, commands = [], []
    for turn, text in enumerate(tool_results(LONG_TURNS), start=1):
        name = f"part_{turn:02}.py"
        (root / name).write_text(text, encoding="utf-8")
        if turn % LONG_COMMAND_EVERY == 0:
            argv = (sys.executable, "-c", f"print(open({name!r}).read() * 3)")
            commands.append(argv)
            responses.append(json.dumps({"tool": "run_command", "argv": list(argv)}))
        else:
            responses.append(json.dumps({"tool": "read_file", "path": name}))
    return [*responses, json.dumps({"final": "read every part"})], tuple(commands)


def long_run(generate: ScriptedTurns, side: dict[str, Any]) -> dict[str, Any]:
    """One long run: its prefilled tokens, elisions, largest prompt and model seconds."""
    from counterfoil import AgentLimits, ReceiptStore, ToolPolicy, Workspace, run_agent
    from counterfoil.context.compaction import COMPACTED_PREFIX
    from counterfoil.gate.workspace_setup import WorkspaceSetup

    limits = AgentLimits(
        max_steps=LONG_TURNS + 1,
        max_context_tokens=LONG_BUDGET,
        elide_down_to=side["elide_down_to"],
        max_inline_chars=LONG_INLINE_CHARS if side["compaction"] else None,
    )
    with tempfile.TemporaryDirectory() as root:
        responses, commands = long_project(Path(root))
        generate.responses = iter(responses)
        (Path(root) / ".counterfoil").mkdir()
        workspace: Any = Workspace(
            ToolPolicy(Path(root), allow_search=True, allowed_commands=commands),
            receipt_store=ReceiptStore(Path(root) / ".counterfoil" / "receipts.jsonl"),
            setup=WorkspaceSetup(confirm_proposal=lambda _: True),
        )
        if not side["compaction"]:
            workspace = ReadsOnly(workspace)
        messages: list[dict[str, str]] = []
        run = run_agent(LONG_GOAL, generate, workspace, limits, messages=messages)
    if run.reason != "completed":
        raise SystemExit(f"the long run ended with {run.reason}: the budget cannot hold it")
    stats = generate.model.stats
    return {
        "prefilled": sum(s.prefilled_tokens for s in stats),
        "elided": sum(1 for m in messages if m["content"].startswith("Tool result:\n[read_file")),
        "compacted": sum(1 for m in messages if m["content"].startswith(COMPACTED_PREFIX)),
        "largest": max(s.prompt_tokens for s in stats),
        "prefill_seconds": sum(s.prefill_seconds for s in stats),
        "seconds": sum(s.seconds for s in stats),
        "results": [event.result for event in run.events],
        "per_turn": [s.prefilled_tokens for s in stats],
    }


def side_by_side(model_dir: Path) -> dict[str, dict[str, Any]]:
    """The long runs at once, each in its own thread, taking turns at the model call by call."""
    from counterfoil.models import GenerationOptions, load_generate

    options = GenerationOptions(max_tokens=LONG_GENERATED_TOKENS, constrain=False)
    names = list(SIDES)
    baton = Baton(len(names))
    results: list[dict[str, Any] | BaseException] = [RuntimeError("not run")] * len(names)

    def run(side: int, generate: ScriptedTurns) -> None:
        try:
            results[side] = long_run(generate, SIDES[names[side]])
        except BaseException as error:  # noqa: BLE001 - raised again on the main thread
            results[side] = error
        finally:
            baton.pass_on(side, finished=True)

    models = [
        ScriptedTurns(load_generate(str(model_dir), options), [], baton, side)
        for side in range(len(names))
    ]
    threads = [
        threading.Thread(target=run, args=(side, models[side])) for side in range(len(names))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return {name: result for name, result in zip(names, results) if isinstance(result, dict)}


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
        leave(0)
    from counterfoil.models import GenerationOptions, load_generate
    from counterfoil.models.mlx.mlx import MLXGenerate

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
    leave(0 if identical else 1)


def leave(status: int) -> None:
    """Exit without the interpreter's teardown: after models generated on the long run's worker
    threads, MLX sometimes aborts in it ("terminate called without an active exception"), and
    the figures are already out."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def long_model_dir() -> Path:
    from counterfoil.testing.tiny_model import TinyShape, cached_tiny_model

    if QUICK:
        return bench_model_dir()
    return cached_tiny_model(shape=TinyShape(**LONG_SIZES), **BENCH_MODEL)


def long_figures() -> dict[str, object]:
    model_dir = long_model_dir()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    sides = side_by_side(model_dir)
    seconds = time.perf_counter() - started
    compaction, steps, every = sides["compaction"], sides["in_steps"], sides["every_turn"]
    if not compaction["results"] == steps["results"] == every["results"]:
        raise SystemExit("the long runs saw different results")
    print(
        f"long run: model {model_dir.name}; {LONG_TURNS} turns (a read of {TOOL_RESULT_CHARS} "
        f"characters, every {LONG_COMMAND_EVERY}th a command printing {3 * TOOL_RESULT_CHARS}), "
        f"budget {LONG_BUDGET} tokens, prompt cache kept; side by side, call by call, in "
        f"{seconds:.0f} s; load average {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(f"{'turn':>4} {'prefilled':>10} {'prefilled':>9} {'prefilled':>10}")
    print(f"{'':>4} {'compaction':>10} {'in steps':>9} {'every turn':>10}")
    for turn, (a, b, c) in enumerate(
        zip(compaction["per_turn"], steps["per_turn"], every["per_turn"]), start=1
    ):
        print(f"{turn:>4} {a:>10} {b:>9} {c:>10}")
    print(
        f"{'view':<26} {'prefilled':>9} {'elided':>6} {'compacted':>9} {'max prompt':>10} "
        f"{'prefill s':>9} {'model s':>7}"
    )
    for name, side in sides.items():
        print(
            f"{SIDE_NAMES[name]:<26} {side['prefilled']:>9} {side['elided']:>6} "
            f"{side['compacted']:>9} {side['largest']:>10} {side['prefill_seconds']:>9.2f} "
            f"{side['seconds']:>7.2f}"
        )
    ratio = every["prefilled"] / steps["prefilled"]
    print(
        f"prefilled tokens: compaction {compaction['prefilled']}, reads in steps "
        f"{steps['prefilled']}, every turn {every['prefilled']} ({ratio:.2f}x fewer in steps)"
    )
    figures: dict[str, object] = {
        "long_model": model_dir.name,
        "long_turns": LONG_TURNS,
        "long_commands": LONG_TURNS // LONG_COMMAND_EVERY,
        "long_budget_tokens": LONG_BUDGET,
        "long_inline_chars": LONG_INLINE_CHARS,
        "long_prefill_token_ratio": round(ratio, 2),
        "long_prefill_time_ratio": round(every["prefill_seconds"] / steps["prefill_seconds"], 2),
        "long_wall_seconds": round(seconds, 1),
    }
    for name, side in sides.items():
        figures.update(
            {
                f"long_prefilled_tokens_{name}": side["prefilled"],
                f"long_prefill_seconds_{name}": round(side["prefill_seconds"], 2),
                f"long_model_seconds_{name}": round(side["seconds"], 2),
                f"long_elided_{name}": side["elided"],
                f"long_compacted_{name}": side["compacted"],
                f"long_largest_prompt_{name}": side["largest"],
            }
        )
    return figures


if __name__ == "__main__":
    main()

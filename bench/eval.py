"""The eval harness's own cost per task with scripted models, or a real model's results.

Without `--model`: each fixture package is run with the solving script, repeatedly; per task
the harness time is the wall time of `run_task` less the agent run's own (staging the copy, the
inventories, grading, verifying the receipt log, removing the copy). Target: under 0.5 s per
task. The package's commands run confined, as `counterfoil eval` runs them (the sandbox's start
is part of the run).

`--model FILE.gguf` (any spec `agent --model` takes): the four packages, `--runs` times each
(default 3; `--transcripts DIR` keeps each run's transcript), through each `--engine`
(default: mlx and llama.cpp), as `counterfoil eval` runs them; per engine and task the pass
rate, median steps, generated tokens and seconds per run, and false verdicts (the run's own
validation passed while the held-out checks failed, or a receipt log that did not verify).
`--check-final-answer`: each engine runs the tasks twice, side by side, with the setting off
and on. Target: at least 3 of the 4 tasks passed in every round. Prints a table, then one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from counterfoil.evals.models import ModelUnderTest
from counterfoil.evals.package import load_package
from counterfoil.evals.runner import run_task
from counterfoil.models import close_model
from workload import sized

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "evals"
TASKS = ("failure-recovery", "localized-constant", "release-notes", "repository-convention")
ROUNDS = sized(10, 1)
TARGET_SECONDS = 0.5


def harness_overhead() -> None:
    model = ModelUnderTest(f"scripted:{FIXTURES / 'scripts' / 'solve'}")
    rows: list[dict[str, Any]] = []
    for task in TASKS:
        package = load_package(FIXTURES / task)
        harness, runs, totals = [], [], []
        for _ in range(ROUNDS):
            generate, limits = model.generate_for(package.id)
            started = time.perf_counter()
            result = run_task(package, generate, limits=limits)
            totals.append(time.perf_counter() - started)
            assert result.status == "passed", result
            harness.append(result.harness_seconds)
            runs.append(result.metrics.wall_seconds)
        rows.append(
            {
                "task": task,
                "harness_seconds": round(statistics.median(harness), 4),
                "run_seconds": round(statistics.median(runs), 4),
                "total_seconds": round(statistics.median(totals), 4),
            }
        )
    print(f"{'task':<24} {'harness':>9} {'run':>9} {'total':>9}")
    for row in rows:
        print(
            f"{row['task']:<24} {row['harness_seconds']:>8.3f}s {row['run_seconds']:>8.3f}s "
            f"{row['total_seconds']:>8.3f}s"
        )
    worst = max(row["harness_seconds"] for row in rows)
    print(f"worst harness overhead {worst:.3f} s per task (target < {TARGET_SECONDS} s)")
    print(
        json.dumps(
            {
                "bench": "eval",
                "rounds": ROUNDS,
                "tasks": rows,
                "worst_harness_seconds": worst,
                "target_seconds": TARGET_SECONDS,
                "within_target": worst < TARGET_SECONDS,
            }
        )
    )


def evaluate(
    spec: str,
    engine: str,
    runs: int,
    context_tokens: int,
    transcripts: Path | None = None,
    check_final: bool = False,
) -> dict[str, Any]:
    """Every task `runs` times through one engine: per task its figures, and per round (the
    tasks' n-th runs) how many passed. `transcripts`: the folder that keeps each run's
    transcript and receipt log (`<engine>[-check-final]-<task>-<run>`), to read what the model
    did. `check_final`: with the setting `checkFinalAnswer` on."""
    settings = {"engine": engine, "contextTokens": context_tokens, "checkFinalAnswer": check_final}
    model = ModelUnderTest(spec, settings)
    label = f"{engine}-check-final" if check_final else engine
    packages = [load_package(FIXTURES / task) for task in TASKS]
    hidden = tuple(package.source for package in packages)
    rows, rounds = [], [0] * runs
    generate: Any = None
    for package in packages:
        task_runs = []
        for number in range(runs):
            try:
                generate, limits = model.generate_for(package.id)
            except Exception as error:  # noqa: BLE001 - the engine could not load the model
                return {"engine": engine, "error": str(error).splitlines()[0]}
            kept = (
                None if transcripts is None else transcripts / f"{label}-{package.id}-{number + 1}"
            )
            run = run_task(package, generate, limits=limits, hidden=hidden, keep_in=kept)
            task_runs.append(run)
            rounds[number] += run.status == "passed"
            print(
                f"  {label} {package.id} run {number + 1}: {run.status} ({run.reason}), "
                f"{run.metrics.steps} steps, {run.metrics.wall_seconds:.0f} s"
                + (f": {run.error}" if run.error else ""),
                file=sys.stderr,
                flush=True,
            )
        rows.append(task_row(package.id, task_runs))
    identity = model.identity()
    close_model(generate)  # llama.cpp's server ends with the engine's turn
    return {
        "engine": engine,
        "check_final_answer": check_final,
        "tasks": rows,
        "passed_per_round": rounds,
        "model": identity,
    }


def task_row(task: str, runs: list[Any]) -> dict[str, Any]:
    false = sum(
        1
        for run in runs
        if not run.receipts.ok or (run.verdict.validation == "passed" and run.status != "passed")
    )
    return {
        "task": task,
        "passed": sum(run.status == "passed" for run in runs),
        "runs": len(runs),
        "reasons": [run.reason for run in runs],
        "steps": statistics.median(run.metrics.steps for run in runs),
        "generated_tokens": statistics.median(run.metrics.generated_tokens or 0 for run in runs),
        "seconds": round(statistics.median(run.metrics.wall_seconds for run in runs), 1),
        "false_verdicts": false,
    }


def model_results(arguments: argparse.Namespace) -> None:
    results = [
        evaluate(
            arguments.model,
            engine,
            arguments.runs,
            arguments.context_tokens,
            arguments.transcripts,
            check_final,
        )
        for engine in arguments.engine or ["mlx", "llama.cpp"]
        for check_final in ((False, True) if arguments.check_final_answer else (False,))
    ]
    print(f"model: {arguments.model}; {arguments.runs} runs per task")
    print(
        f"{'engine':<10} {'final':<7} {'task':<24} {'passed':>7} {'steps':>6} {'tokens':>7} "
        f"{'seconds':>8} {'false':>6}"
    )
    for result in results:
        final = "checked" if result.get("check_final_answer") else "ends"
        if "error" in result:
            print(f"{result['engine']:<10} not run: {result['error']}")
            continue
        for row in result["tasks"]:
            print(
                f"{result['engine']:<10} {final:<7} {row['task']:<24} "
                f"{row['passed']:>3}/{row['runs']:<3} {row['steps']:>6g} "
                f"{row['generated_tokens']:>7g} {row['seconds']:>8.1f} {row['false_verdicts']:>6}"
            )
        rounds = result["passed_per_round"]
        met = min(rounds) >= 3
        print(
            f"{result['engine']:<10} {final:<7} tasks passed per round: {rounds} "
            f"(target >= 3 of 4: {met})"
        )
        result["target_met"] = met
    print(json.dumps({"bench": "eval", "model": arguments.model, "results": results}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--model", default=None, help="a model spec, e.g. a .gguf file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engine", action="append", choices=("mlx", "llama.cpp"))
    parser.add_argument("--context-tokens", type=int, default=16_384)
    parser.add_argument("--transcripts", type=Path, help="keep each run's transcript here")
    parser.add_argument(
        "--check-final-answer",
        action="store_true",
        help="run each engine with checkFinalAnswer off and on, side by side",
    )
    arguments = parser.parse_args()
    if arguments.model is None:
        harness_overhead()
    else:
        model_results(arguments)


if __name__ == "__main__":
    main()

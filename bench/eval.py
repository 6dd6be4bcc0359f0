"""The eval harness's own cost per task with scripted models, or a real model's results.

Without `--model`: each fixture package is run with the solving script, repeatedly; per task
the harness time is the wall time of `run_task` less the agent run's own (staging the copy, the
inventories, grading, verifying the receipt log, removing the copy). Target: under 0.5 s per
task. The package's commands run confined, as `counterfoil eval` runs them (the sandbox's start
is part of the run).

`--model FILE.gguf` (any spec `agent --model` takes): each `--set` (default: `fixtures`, the
four packages of fixtures/evals, and `tuning`; `held-out` is run only for the reported figure,
see fixtures/evals/README.md), `--runs` times each (default 3; `--transcripts DIR` keeps each
run's transcript), through each `--engine` (default llama.cpp), as `counterfoil eval` runs
them; per set and task the pass rate, median steps, generated tokens and seconds per run, and
false verdicts (the run's own validation passed while the held-out checks failed, or a receipt
log that did not verify); per set the tasks passed in each round. The peer column is the same
packages through Aider on the same llama.cpp server (`aider_peer.py`), absent, and said so,
when Aider is not installed or the engine is not llama.cpp (`--no-peer`: not run).
Where the packages' commands cannot run confined (no sandbox here), it runs nothing and exits 2,
as `counterfoil eval` does without `--unconfined`: every task would count as failed by the model.
`--check-final-answer`: each engine runs the tasks twice, side by side, with the setting off
and on; `--edit-form` (once per form): with each `editForm` given. Targets: at least 3 of the 4 fixtures in every round, 60 % of the held-out set, ahead
of the peer on every set. Prints a table per set, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from aider_peer import aider_absent, run_aider
from counterfoil.evals.confinement import command_sandbox
from counterfoil.evals.models import ModelUnderTest
from counterfoil.evals.package import TaskPackage, load_package
from counterfoil.evals.runner import run_task
from counterfoil.models import close_model
from counterfoil.tools import EDIT_FORMS
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


def set_packages(name: str) -> list[TaskPackage]:
    """The packages of one set: the four fixtures, or every package under tuning/ or held-out/."""
    if name == "fixtures":
        return [load_package(FIXTURES / task) for task in TASKS]
    return [load_package(path.parent) for path in sorted((FIXTURES / name).glob("*/task.json"))]


def evaluate(
    spec: str,
    engine: str,
    runs: int,
    context_tokens: int,
    sets: list[str],
    transcripts: Path | None = None,
    check_final: bool | None = None,
    peer: bool = True,
    edit_form: str | None = None,
) -> dict[str, Any]:
    """Every task of each set `runs` times through one engine: per task its figures, and per
    round (the tasks' n-th runs) how many passed; with `peer`, the same through Aider on the
    same llama.cpp server. `transcripts`: the folder that keeps each run's transcript and
    receipt log (`<engine>[-final-on|off]-<task>-<run>`, Aider's output as
    `aider-<task>-<run>.log`). `check_final`: the setting `checkFinalAnswer`, `edit_form`:
    `editForm` (None: their defaults)."""
    settings: dict[str, Any] = {"engine": engine, "contextTokens": context_tokens}
    label = engine
    if check_final is not None:
        settings["checkFinalAnswer"] = check_final
        label += "-final-on" if check_final else "-final-off"
    if edit_form is not None:
        settings["editForm"] = edit_form
        label += f"-{edit_form}"
    model = ModelUnderTest(spec, settings)
    chosen = {name: set_packages(name) for name in sets}
    hidden = tuple(package.source for packages in chosen.values() for package in packages)
    results: dict[str, Any] = {}
    generate: Any = None
    for name, packages in chosen.items():
        rows, rounds = [], [0] * runs
        for package in packages:
            task_runs = []
            for number in range(runs):
                try:
                    generate, limits = model.generate_for(package.id)
                except Exception as error:  # noqa: BLE001 - the engine could not load the model
                    return {"engine": engine, "error": str(error).splitlines()[0]}
                kept = (
                    None
                    if transcripts is None
                    else transcripts / f"{label}-{package.id}-{number + 1}"
                )
                run = run_task(
                    package,
                    generate,
                    limits=limits,
                    hidden=hidden,
                    keep_in=kept,
                    edit_form=model.edit_form,
                )
                task_runs.append(run)
                rounds[number] += run.status == "passed"
                print(
                    f"  {label} {name} {package.id} run {number + 1}: {run.status} ({run.reason}), "
                    f"{run.metrics.steps} steps, {run.metrics.wall_seconds:.0f} s"
                    + (f": {run.error}" if run.error else ""),
                    file=sys.stderr,
                    flush=True,
                )
            rows.append(task_row(package.id, task_runs))
        results[name] = {"tasks": rows, "passed_per_round": rounds, "packages": len(packages)}
    if peer:
        server = getattr(generate, "server", None)
        absent = aider_absent() or (
            None if server is not None else "the peer runs on the llama.cpp engine's server"
        )
        for name, packages in chosen.items():
            results[name]["peer"] = (
                {"absent": absent}
                if absent
                else peer_results(name, packages, runs, server.url, server.key, transcripts)
            )
    identity = model.identity()
    close_model(generate)  # llama.cpp's server ends with the engine's turn
    return {
        "engine": engine,
        "check_final_answer": check_final,
        "edit_form": model.edit_form,
        "sets": results,
        "model": identity,
    }


def peer_results(
    name: str, packages: list[TaskPackage], runs: int, url: str, key: str, logs: Path | None
) -> dict[str, Any]:
    """Each package `runs` times through Aider: per task passed runs, median seconds and tokens."""
    rows, rounds = [], [0] * runs
    for package in packages:
        peer_runs = []
        for number in range(runs):
            log = None if logs is None else logs / f"aider-{package.id}-{number + 1}.log"
            run = run_aider(package, url, key, log=log)
            peer_runs.append(run)
            rounds[number] += run.status == "passed"
            print(
                f"  aider {name} {package.id} run {number + 1}: {run.status}, {run.seconds:.0f} s"
                + (f": {run.detail}" if run.detail else ""),
                file=sys.stderr,
                flush=True,
            )
        rows.append(
            {
                "task": package.id,
                "passed": sum(run.status == "passed" for run in peer_runs),
                "runs": runs,
                "seconds": round(statistics.median(run.seconds for run in peer_runs), 1),
                "received_tokens": statistics.median(run.received_tokens or 0 for run in peer_runs),
                "failed": [run.detail for run in peer_runs if run.detail],
            }
        )
    return {"tasks": rows, "passed_per_round": rounds}


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
    sets = arguments.set or ["fixtures", "tuning"]
    results = [
        evaluate(
            arguments.model,
            engine,
            arguments.runs,
            arguments.context_tokens,
            sets,
            arguments.transcripts,
            check_final,
            peer=arguments.peer and index == 0 and form_index == 0,
            edit_form=edit_form,
        )
        for engine in arguments.engine or ["llama.cpp"]
        for index, check_final in enumerate(
            (False, True) if arguments.check_final_answer else (None,)
        )
        for form_index, edit_form in enumerate(arguments.edit_form or [None])
    ]
    print(f"model: {arguments.model}; {arguments.runs} runs per task")
    for result in results:
        final = {None: "", True: " checkFinalAnswer on", False: " checkFinalAnswer off"}[
            result.get("check_final_answer")
        ] + (f" editForm {result.get('edit_form')}" if arguments.edit_form else "")
        if "error" in result:
            print(f"{result['engine']}: not run: {result['error']}")
            continue
        for name, figures in result["sets"].items():
            print_set(f"{result['engine']}{final}", name, figures)
    print(json.dumps({"bench": "eval", "model": arguments.model, "results": results}))


def print_set(label: str, name: str, figures: dict[str, Any]) -> None:
    """One set's table: per task the agent's runs passed, steps, tokens, seconds and false
    verdicts, then the peer's runs passed and seconds; then each side's passes per round."""
    peer = figures.get("peer", {"absent": "not asked for (--no-peer)"})
    by_task = {row["task"]: row for row in peer.get("tasks", [])}
    print(f"\n{label}, set {name} ({figures['packages']} tasks)")
    print(
        f"{'task':<24} {'passed':>7} {'steps':>6} {'tokens':>7} {'seconds':>8} {'false':>6} "
        f"{'aider':>7} {'seconds':>8}"
    )
    for row in figures["tasks"]:
        other = by_task.get(row["task"])
        shown = f"{other['passed']:>3}/{other['runs']:<3} {other['seconds']:>8.1f}" if other else ""
        print(
            f"{row['task']:<24} {row['passed']:>3}/{row['runs']:<3} {row['steps']:>6g} "
            f"{row['generated_tokens']:>7g} {row['seconds']:>8.1f} {row['false_verdicts']:>6} "
            + shown
        )
    rounds = figures["passed_per_round"]
    share = min(rounds) / figures["packages"] if figures["packages"] else 0.0
    figures["least_share_per_round"] = round(share, 3)
    print(f"passed per round: {rounds} of {figures['packages']}")
    if "absent" in peer:
        print(f"aider: absent ({peer['absent']})")
    else:
        print(f"aider passed per round: {peer['passed_per_round']} of {figures['packages']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--model", default=None, help="a model spec, e.g. a .gguf file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engine", action="append", choices=("mlx", "llama.cpp"))
    parser.add_argument(
        "--set",
        action="append",
        choices=("fixtures", "tuning", "held-out"),
        help="the task sets to run (default: fixtures and tuning; held-out only for the figure)",
    )
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="no Aider column")
    parser.add_argument("--context-tokens", type=int, default=16_384)
    parser.add_argument("--transcripts", type=Path, help="keep each run's transcript here")
    parser.add_argument(
        "--check-final-answer",
        action="store_true",
        help="run each engine with checkFinalAnswer off and on, side by side (the peer once)",
    )
    parser.add_argument(
        "--edit-form",
        action="append",
        choices=tuple(EDIT_FORMS),
        help="run each engine with each edit form given (editForm), side by side (the peer once)",
    )
    arguments = parser.parse_args()
    sets = ["fixtures"] if arguments.model is None else arguments.set or ["fixtures", "tuning"]
    _, refusal = command_sandbox(package for name in sets for package in set_packages(name))
    if refusal is not None:  # every command would fail for the machine, and count as the model's
        print(f"error: {refusal}; nothing was run", file=sys.stderr)
        sys.exit(2)
    if arguments.model is None:
        harness_overhead()
    else:
        model_results(arguments)


if __name__ == "__main__":
    main()

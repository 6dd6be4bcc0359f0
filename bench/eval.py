"""The eval harness's own cost per task, beyond the run itself, with scripted models.

Each fixture package is run with the solving script, repeatedly; per task the harness time is
the wall time of `run_task` less the agent run's own (staging the copy, the inventories,
grading, verifying the receipt log, removing the copy). Target: under 0.5 s per task. The
package's commands run confined, as `counterfoil eval` runs them (the sandbox's start is part
of the run). Prints a table, then one JSON line.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from counterfoil.evals.models import ModelUnderTest
from counterfoil.evals.package import load_package
from counterfoil.evals.runner import run_task
from workload import sized

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "evals"
TASKS = ("failure-recovery", "localized-constant", "release-notes", "repository-convention")
ROUNDS = sized(10, 1)
TARGET_SECONDS = 0.5


def main() -> None:
    model = ModelUnderTest(f"scripted:{FIXTURES / 'scripts' / 'solve'}")
    rows = []
    for task in TASKS:
        package = load_package(FIXTURES / task)
        harness, runs, totals = [], [], []
        for _ in range(ROUNDS):
            generate, stats, limits = model.generate_for(package.id)
            started = time.perf_counter()
            result = run_task(package, generate, limits=limits, stats=stats)
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


if __name__ == "__main__":
    main()
